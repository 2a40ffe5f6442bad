# The two commands: `make run` (set up, then run the main job) and `make test` (set up, then test).
# `make lab` opens JupyterLab on notebooks/ with the project's kernel.
.PHONY: setup run test lab teach bench clean

VENV := .venv
BIN := $(VENV)/bin

# Create/refresh .venv (Java checked, package + dependencies installed, Jupyter kernel registered).
setup:
	@bash scripts/setup.sh

# The main job (scripts/run.sh): every notebook at the standard profile, one per core at once (at most 3).
run: setup
	@bash scripts/run.sh

# Lint (the rules in pyproject.toml), then the test suite on both cores (one Spark session per
# pytest-xdist worker; a file's tests stay on one worker, so a module fixture is built once, and
# the files of the tests marked heavy, the notebook runs, go first: tests/conftest.py);
# the HTML report tests need Chromium, installed first when missing. Bytecode is written even where
# the environment says PYTHONDONTWRITEBYTECODE: the suite starts hundreds of Python processes (the
# command line's, the notebooks' kernels), and each would otherwise compile the package again, and
# pytest would rewrite every test module's assertions in each worker.
test: setup
	$(BIN)/ruff check staleness_lab tests benchmarks scripts
	@bash scripts/ensure-chromium.sh
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder

# JupyterLab on notebooks/, loopback only: LAB_PORT (default 8888), JUPYTER_TOKEN if set,
# LAB_ARGS passed on to `jupyter lab`. Stop it with Ctrl-C.
lab: setup
	@bash scripts/lab.sh $(LAB_ARGS)

# The teaching notebooks (notebooks/teaching/) served to a class with Voila, code hidden:
# TEACH_PORT (default 8866), TEACH_IP (default 127.0.0.1; 0.0.0.0 lets the whole network in).
# Stop it with Ctrl-C (its kernels stop with it).
TEACH_PORT ?= 8866
TEACH_IP ?= 127.0.0.1
teach: setup
	$(BIN)/staleness-lab teach --port $(TEACH_PORT) --ip $(TEACH_IP)

# The engine benchmark (benchmarks/).
bench: setup
	$(BIN)/staleness-lab bench

# Remove the environment and build/test caches.
clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info
