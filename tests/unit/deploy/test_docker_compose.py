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
    assert "\t" not in text, "YAML must not contain tabs"
    services = parse_services(text)
    assert set(services) == {"kafka", "wordcount", "integration"}
    kafka = services["kafka"]
    assert kafka["image"][0].startswith("apache/kafka:4.")
    assert '- "127.0.0.1:9092:9092"' in kafka["ports"]
    env = dict(item.split(": ", 1) for item in kafka["environment"])
    assert env["KAFKA_PROCESS_ROLES"] == '"broker,controller"'
    assert "PLAINTEXT://kafka:29092" in env["KAFKA_ADVERTISED_LISTENERS"]
    voters = re.findall(r"(\d+)@(\w+):(\d+)", env["KAFKA_CONTROLLER_QUORUM_VOTERS"])
    assert voters == [(env["KAFKA_NODE_ID"].strip('"'), "kafka", "9093")]
    assert "healthcheck" in kafka


def test_app_services_build_the_project_image_and_reach_the_broker_inside_the_network():
    services = parse_services(COMPOSE.read_text(encoding="utf-8"))
    for name in ("wordcount", "integration"):
        service = services[name]
        assert "dockerfile: ./docker/app.Dockerfile" in service["build"]
        assert "condition: service_healthy" in service["depends_on"]
        assert "kafka:29092" in " ".join(service["command"] + service["environment"])


def test_every_repo_path_the_compose_file_and_dockerfile_name_exists():
    text = COMPOSE.read_text(encoding="utf-8")
    paths = re.findall(r"\./([\w./-]+\w)", text)
    assert "examples/wordcount.py" in paths and "docker/app.Dockerfile" in paths
    for path in paths:
        if path.startswith((".venv/", ".deps/")):
            continue  # made inside the image by `make setup deps-spark-kafka`
        assert (ROOT / path).exists(), f"docker-compose.yml names ./{path}, which is not in the repo"
    dockerfile = (ROOT / "docker" / "app.Dockerfile").read_text(encoding="utf-8")
    targets = re.findall(r"^RUN make (.+)$", dockerfile, re.M)[0].split()
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target in targets:
        assert re.search(rf"^{re.escape(target)}:", makefile, re.M), f"Dockerfile runs `make {target}`, not a target"
    assert re.search(r"^FROM python:3\.11", dockerfile, re.M)
    assert "openjdk-17" in dockerfile
