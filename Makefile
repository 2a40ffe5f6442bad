# The two commands: `make run` (set up, then run the main job) and `make test` (set up, then test).
.PHONY: setup run test bench clean

VENV := .venv
BIN := $(VENV)/bin

setup:
	@bash scripts/setup.sh

run: setup
	@bash scripts/run.sh

test: setup
	$(BIN)/python -m pytest -q

bench: setup
	$(BIN)/staleness-lab bench

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info
