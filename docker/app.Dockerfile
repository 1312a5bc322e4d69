# The streams-on-spark image for docker compose: Python 3.11, Java 17, Maven, the project and its pinned deps, and
# the Spark Kafka connector jars resolved from Maven Central at image build time: nothing downloads at run time.
FROM python:3.11-slim-bookworm
RUN apt-get update \
 && apt-get install -y --no-install-recommends openjdk-17-jdk-headless maven make procps \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY . /app
RUN make setup deps-spark-kafka
ENV PYSPARK_PYTHON=/app/.venv/bin/python PYSPARK_DRIVER_PYTHON=/app/.venv/bin/python
CMD ["make", "help"]
