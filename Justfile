# `just test`, `just lint`, `just check` (what CI runs: bash .ci/run)

test:
    .venv/bin/pytest -q

lint:
    .venv/bin/ruff check pipeline tests bench
    .venv/bin/mypy

check:
    bash .ci/run

bench:
    .venv/bin/python bench/detect.py
    .venv/bin/python bench/nightly.py
