"""The files in deploy/ and docs/operating.md agree with the code.

No container engine or systemd runs here, so these tests read the files and
check them against the real command line, defaults, health paths and
metrics: ports, paths, the health URL, the command and every option used.
"""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import subprocess
import sys
import tomllib
from functools import cache
from pathlib import Path

import pytest

from server.cli import SERVE_DEFAULTS, build_parser, load_config
from server.net.metrics import HEALTH_PATHS

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"


@cache
def serve_help() -> str:
    return subprocess.run(
        [sys.executable, "-m", "server.cli", "serve", "--help"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout


def check_command(argv: list[str]) -> dict[str, object]:
    """Parse an ``underhall`` command line as the real parser does; every
    ``--option`` must be listed by ``serve --help``. Returns the options."""
    assert argv[0] == "serve", argv
    for word in argv:
        if word.startswith("--"):
            assert word.split("=")[0] in serve_help(), f"{word} is not a serve option"
    args = build_parser().parse_args(argv)
    return vars(args)


def dockerfile() -> list[tuple[str, str]]:
    """``(INSTRUCTION, arguments)`` of deploy/Dockerfile, continuation lines joined."""
    text = re.sub(r"\\\n", " ", (DEPLOY / "Dockerfile").read_text())
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def instruction(name: str) -> list[str]:
    return [rest for word, rest in dockerfile() if word == name]


def readme_install() -> str:
    match = re.search(
        r"(python3 -m venv \.venv && \.venv/bin/pip install -e \.)",
        (ROOT / "README.md").read_text(),
    )
    assert match, "the README's install command"
    return match.group(1)


def test_dockerfile_agrees_with_the_code() -> None:
    [base] = instruction("FROM")
    assert re.fullmatch(r"python:3\.(1[1-9])-slim", base), base
    assert any(readme_install() in run for run in instruction("RUN"))
    copied = {source for rest in instruction("COPY") for source in rest.split()[:-1]}
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = {p.rstrip("*") for p in project["tool"]["setuptools"]["packages"]["find"]["include"]}
    assert packages <= copied and "pyproject.toml" in copied

    [user] = instruction("USER")
    assert user not in ("root", "0") and any(
        f" {user}" in run and "useradd" in run for run in instruction("RUN")
    )
    [volume] = instruction("VOLUME")
    data = json.loads(volume)[0]
    assert any(f"UNDERHALL_DB={data}/" in env for env in instruction("ENV"))

    [entry] = instruction("ENTRYPOINT")
    assert json.loads(entry) == ["underhall"] and "underhall" in project["project"]["scripts"]
    [cmd] = instruction("CMD")
    options = check_command(json.loads(cmd))
    port = int(str(options["port"]))
    assert port == SERVE_DEFAULTS["port"]
    assert str(options["db"]).startswith(data + "/")
    assert options["host"] == "0.0.0.0"
    assert instruction("EXPOSE") == [str(port)]

    [health] = instruction("HEALTHCHECK")
    url = re.search(r"http://127\.0\.0\.1:(\d+)(/\w+)", health)
    assert url and int(url.group(1)) == port and url.group(2) == "/healthz"
    assert url.group(2) in HEALTH_PATHS
    assert instruction("STOPSIGNAL") == ["SIGTERM"]


def compose_service(name: str) -> str:
    """The text of one service of deploy/compose.yaml."""
    text = (DEPLOY / "compose.yaml").read_text()
    match = re.search(rf"^  {name}:\n((?:    .*\n|\n)+)", text, flags=re.MULTILINE)
    assert match, f"service {name}"
    return match.group(1)


def compose_list(service: str, key: str) -> list[str]:
    match = re.search(rf"^    {key}:\n((?:      - .*\n)+)", service, flags=re.MULTILINE)
    assert match, key
    return [item.strip()[2:].strip().strip('"') for item in match.group(1).splitlines()]


def test_compose_agrees_with_the_code_and_the_dockerfile() -> None:
    server = compose_service("underhall")
    assert "dockerfile: deploy/Dockerfile" in server and "context: .." in server
    options = check_command(compose_list(server, "command"))
    assert str(options["db"]).startswith("postgresql:") and "@postgres:5432/" in str(
        compose_list(server, "command")
    )
    port = str(options["port"])
    assert compose_list(server, "ports") == [f"{port}:{port}"]
    [volume] = compose_list(server, "volumes")
    data = json.loads(instruction("VOLUME")[0])[0]
    assert volume.split(":")[1] == data
    assert str(options["admin_socket"]).startswith(data + "/")
    grace = re.search(r"stop_grace_period: (\d+)s", server)
    assert grace and float(grace.group(1)) > float(str(options["drain_s"]))
    postgres = compose_service("postgres")
    assert "image: postgres:" in postgres and "pg_isready" in postgres
    assert "POSTGRES_USER: underhall" in postgres and "POSTGRES_DB: underhall" in postgres


def unit() -> dict[str, str]:
    out = {}
    for line in (DEPLOY / "underhall.service").read_text().splitlines():
        if "=" in line and not line.startswith("#"):
            key, _, value = line.partition("=")
            out[key.strip()] = value.strip()
    return out


def test_systemd_unit_sysusers_and_config_agree() -> None:
    service = unit()
    [entry] = [
        line.split()
        for line in (DEPLOY / "underhall.sysusers").read_text().splitlines()
        if line.startswith("u ")
    ]
    user, home = entry[1], entry[-1]
    assert service["User"] == user and service["Group"] == user
    assert home == f"/var/lib/{service['StateDirectory']}"
    argv = shlex.split(service["ExecStart"])
    assert argv[0].endswith("/bin/underhall")
    options = check_command(argv[1:])
    config_path = Path(str(options["config"]))
    assert config_path.name == "underhall.toml"
    config = load_config(DEPLOY / "underhall.toml")
    assert str(config["db"]).startswith(home + "/")
    drain = float(str(config.get("drain_s", SERVE_DEFAULTS["drain_s"])))
    assert float(service["TimeoutStopSec"]) > drain and service["KillSignal"] == "SIGTERM"
    assert config["port"] == SERVE_DEFAULTS["port"]


def test_command_lines_in_operating_doc_parse() -> None:
    doc = (ROOT / "docs" / "operating.md").read_text()
    shell = "\n".join(re.findall(r"^```sh\n(.*?)^```", doc, flags=re.MULTILINE | re.DOTALL))
    lines = [
        line.split(" #")[0]
        for line in shell.splitlines()
        if re.search(r"underhall (serve|admin) ", line)
    ]
    checked = 0
    for line in lines:
        start = re.search(r"underhall (serve|admin) ", line)
        assert start is not None
        words = shlex.split(line[start.start() :])[1:]
        if words[0] == "serve":
            check_command(words)
        else:
            build_parser().parse_args(words)
        checked += 1
    assert checked >= 8
    for option in re.findall(r"`(--[a-z-]+)`", doc):
        assert option in serve_help() or option in ("--grace", "--ca", "--json"), option


def names(exposition: str) -> set[str]:
    """Every ``underhall_*`` name in a ``/metrics`` answer (samples, ``# HELP``
    and ``# TYPE`` lines: a labelled metric not yet counted has only those)."""
    return set(re.findall(r"underhall_\w+", exposition))


def has(served: set[str], name: str) -> bool:
    """Whether ``name`` (``underhall_process_`` for the family) is served."""
    if name.endswith("_"):
        return any(n.startswith(name) for n in served)
    return name in served


def cluster_names() -> dict[str, set[str]]:
    """What a cluster gateway's and a worker's ``/metrics`` name, by scrape
    job: each built as the process builds it, before it connects anywhere
    (tests/cluster/test_worker_metrics.py scrapes a running worker)."""
    from prometheus_client.exposition import generate_latest

    from server.cluster.gateway import Gateway
    from server.cluster.worker import Worker

    gateway = Gateway("nats://127.0.0.1:1", gateway_id="g")
    worker = Worker("nats://127.0.0.1:1", "postgresql://nobody@127.0.0.1:1/none", worker_id="w")
    return {
        "underhall-gateway": names(generate_latest(gateway.metrics.registry).decode()),
        "underhall-worker": names(generate_latest(worker.metrics.registry).decode()),
    }


def alert_groups() -> dict[str, str]:
    """The text of each rule group of deploy/prometheus/alerts.yml, by name."""
    text = (DEPLOY / "prometheus" / "alerts.yml").read_text()
    parts = re.split(r"^  - name: (\S+)\n", text, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


async def test_metric_names_in_docs_and_alerts_exist(tmp_path: Path) -> None:
    """Every ``underhall_*`` name in the docs, alert rules and scrape config is
    served: by ``serve`` in its group, by a gateway or a worker in theirs."""
    from server.game.game import Game
    from server.game.store import Store
    from server.net.server import GameServer
    from server.sim.world import World
    from tests.net.conftest import http_get, join

    store = Store(tmp_path / "w.db")
    server = GameServer(Game(World(1, populate=False), store), "127.0.0.1", 0, 20)
    ready: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(server.run(ready, install_signals=False))
    await asyncio.wait_for(ready, 5)
    try:
        ws, _, _ = await join(server, "ann")
        server.game.save_all()
        served = (await http_get(server.port, "/metrics"))[2]
        await ws.close()
    finally:
        server.stop()
        await asyncio.wait_for(task, 10)
        store.close()
    by_job = {"underhall": names(served), **cluster_names()}
    everywhere = set().union(*by_job.values())
    for doc in ("operating.md", "cluster.md"):
        path = ROOT / "docs" / doc
        for name in set(re.findall(r"underhall_\w+", path.read_text())):
            assert has(everywhere, name), f"{doc}: {name} is not served"
    groups = alert_groups()
    assert set(groups) == set(by_job), sorted(groups)
    scrape = (DEPLOY / "prometheus" / "prometheus.yml").read_text()
    for job, rules in groups.items():
        assert f"job_name: {job}\n" in scrape, job
        for name in set(re.findall(r"underhall_\w+", rules)):
            assert has(by_job[job], name), f"alerts.yml, group {job}: {name} is not served"
        for named in re.findall(r'job="([^"]+)"', rules):
            assert named == job, f"group {job} names job {named}"
        assert f'up{{job="{job}"}} == 0' in rules  # each job's targets are watched
        assert len(re.findall(r"- alert: ", rules)) >= 3, job
    assert scrape.count("metrics_path: /metrics") == len(by_job)
    assert f':{SERVE_DEFAULTS["port"]}"' in scrape
    assert "/metrics" in HEALTH_PATHS


def test_worker_scrape_port_is_the_one_the_docs_start_workers_with() -> None:
    """The worker job's targets use the ``--metrics-port`` of docs/cluster.md's
    worker command lines, which parse as ``underhall worker`` options."""
    scrape = (DEPLOY / "prometheus" / "prometheus.yml").read_text()
    job = scrape[scrape.index("job_name: underhall-worker") :]
    ports = set(re.findall(r'"[\w.-]+:(\d+)"', job))
    assert len(ports) == 1, ports
    doc = (ROOT / "docs" / "cluster.md").read_text()
    shell = "\n".join(re.findall(r"^```sh\n(.*?)^```", doc, flags=re.MULTILINE | re.DOTALL))
    lines = [line for line in shell.splitlines() if line.startswith("underhall worker ")]
    metered = []
    for line in lines:
        words = shlex.split(line.split(" #")[0].rstrip(" &"))
        options = vars(build_parser().parse_args(words[1:]))
        if options["metrics_port"] is not None:
            metered.append(options)
    assert metered and all(str(o["metrics_port"]) in ports for o in metered), metered
    assert any(o["metrics_host"] == "0.0.0.0" for o in metered)  # scraped from elsewhere


@pytest.mark.parametrize(
    "path",
    ["underhall.service", "underhall.sysusers", "underhall.toml", "Dockerfile", "compose.yaml"],
)
def test_deploy_files_are_named_in_the_operating_doc(path: str) -> None:
    assert f"deploy/{path}" in (ROOT / "docs" / "operating.md").read_text()


def test_every_config_key_is_a_serve_option_and_the_example_loads() -> None:
    from server.cli import CONFIG_KEYS

    for key in CONFIG_KEYS:
        assert f"--{key.replace('_', '-')}" in serve_help(), key
    config = load_config(DEPLOY / "underhall.toml")
    assert config["drain_s"] == 10.0 and config["log_format"] == "json"
    commented = re.findall(r"^# (\w+) = ", (DEPLOY / "underhall.toml").read_text(), re.MULTILINE)
    assert set(config) | set(commented) == set(CONFIG_KEYS)
