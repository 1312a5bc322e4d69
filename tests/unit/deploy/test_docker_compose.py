"""docker-compose.yml stays valid: Docker does not run on our machines, so the file is parsed (PyYAML) and checked
here, with the Dockerfile and .dockerignore it relies on."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]
COMPOSE = ROOT / "docker-compose.yml"


def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))


def broker_version() -> str:
    pom = (ROOT / "deps" / "kafka-broker" / "pom.xml").read_text(encoding="utf-8")
    return re.search(r"<kafka.version>([^<]+)</kafka.version>", pom).group(1)


def test_compose_defines_a_kraft_broker_of_the_broker_version_on_loopback():
    services = compose()["services"]
    assert set(services) == {"kafka", "wordcount", "integration"}
    kafka = services["kafka"]
    assert kafka["image"] == f"apache/kafka:{broker_version()}"
    assert kafka["ports"] == ["127.0.0.1:9092:9092"]
    env = kafka["environment"]
    assert env["KAFKA_PROCESS_ROLES"] == "broker,controller"
    assert "PLAINTEXT://kafka:29092" in env["KAFKA_ADVERTISED_LISTENERS"].split(",")
    assert env["KAFKA_CONTROLLER_QUORUM_VOTERS"] == f"{env['KAFKA_NODE_ID']}@kafka:9093"
    assert env["KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR"] == "1"   # exactly_once_v2 on one broker
    assert kafka["healthcheck"]["test"][0] == "CMD-SHELL"


def test_app_services_build_the_project_image_and_reach_the_broker_inside_the_network():
    services = compose()["services"]
    for name in ("wordcount", "integration"):
        service = services[name]
        assert service["build"] == {"context": ".", "dockerfile": "./docker/app.Dockerfile"}
        assert service["depends_on"] == {"kafka": {"condition": "service_healthy"}}
        assert "kafka:29092" in " ".join(service["command"] + list(service["environment"].values()))


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


def test_the_image_does_not_copy_the_host_s_environment():
    """``COPY . /app`` must not bring the host's .venv (its scripts point at host paths), .deps or stamps."""
    assert "COPY . /app" in (ROOT / "docker" / "app.Dockerfile").read_text(encoding="utf-8")
    ignored = {line.strip() for line in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
               if line.strip() and not line.startswith("#")}
    assert {".venv", ".deps", ".stamps", "dist", "**/__pycache__"} <= ignored
