"""docker-compose.yml stays valid: Docker does not run on our machines, so the file is checked here."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
COMPOSE = ROOT / "docker-compose.yml"


def parse_services(text: str) -> dict[str, dict[str, list[str]]]:
    """A small reader for the subset of YAML the file uses: services -> keys -> list items / mappings."""
    services: dict[str, dict[str, list[str]]] = {}
    service = key = None
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        stripped = line.strip()
        if indent == 2 and stripped.endswith(":"):
            service = stripped[:-1]
            services[service] = {}
        elif indent == 4 and service:
            key, _, rest = stripped.partition(":")
            services[service][key] = [rest.strip()] if rest.strip() else []
        elif indent >= 6 and service and key:
            services[service][key].append(stripped)
    return services


def test_compose_defines_a_kraft_broker_on_loopback():
    text = COMPOSE.read_text(encoding="utf-8")
    assert text.startswith("#") and "\nservices:\n" in text
    assert "\t" not in text, "YAML must not contain tabs"
    services = parse_services(text)
    kafka = services["kafka"]
    assert kafka["image"][0].startswith("apache/kafka:4.")
    assert '- "127.0.0.1:9092:9092"' in kafka["ports"]
    env = dict(item.split(": ", 1) for item in kafka["environment"])
    assert env["KAFKA_PROCESS_ROLES"] == '"broker,controller"'
    assert "EXTERNAL://localhost:9092" in env["KAFKA_ADVERTISED_LISTENERS"]
    voters = re.findall(r"(\d+)@(\w+):(\d+)", env["KAFKA_CONTROLLER_QUORUM_VOTERS"])
    assert voters == [(env["KAFKA_NODE_ID"].strip('"'), "kafka", "9093")]
    assert "healthcheck" in kafka


def test_every_repo_path_the_compose_file_names_exists():
    text = COMPOSE.read_text(encoding="utf-8")
    for path in re.findall(r"\./([\w./-]+)", text):
        assert (ROOT / path).exists(), f"docker-compose.yml names ./{path}, which is not in the repo"
