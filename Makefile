# TetRig developer tasks. Needs Python 3.11 (bpy 5.0.1 supports no other).
#
#   make venv        .venv with requirements-dev.txt (bpy, numpy, scipy, pytest)
#   make test        pytest over tests/, then make typecheck (what .ci/run runs)
#   make typecheck   mypy over the Blender layer, in its own .venv-typecheck
#   make build       extension zips into dist/ (PLATFORMS="linux-x64 ..." to limit them)
#   make demo MESH=path/to/mesh
#   make real-blender-check  renders and UI checks in the real Blender 4.3 (../shared/tools)
#   make bench       benchmarks/run.py (QUICK=1, REV=commit): timings, targets -> benchmarks/results.md
#   make clean       build output and caches (make distclean: also venvs and wheels)

PYTHON ?= python3
VENV := .venv
TYPECHECK_VENV := .venv-typecheck
# The repository root is the add-on package; mypy sees it through this link, named after the
# package, because the clone's own folder name is arbitrary (see mypy.ini).
TYPECHECK_SRC := $(TYPECHECK_VENV)/src
TYPECHECK_TARGETS := -m tetrig -p tetrig.operators -p tetrig.panels -p tetrig.runtime \
	-m tetrig.scripts.batch -m tetrig.scripts.demo -m tetrig.scripts.load_addon
PLATFORMS ?=
MESH ?=

.PHONY: venv test typecheck build demo bench real-blender-check clean distclean

venv: $(VENV)/.stamp

$(VENV)/.stamp: requirements-dev.txt
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11) and \
		"bpy 5.0.1 needs Python 3.11: run make with PYTHON=python3.11")'
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -r requirements-dev.txt
	touch $@

test: venv
	$(VENV)/bin/python -m pytest -q tests
	$(MAKE) typecheck

$(TYPECHECK_VENV)/.stamp: requirements-typecheck.txt
	$(PYTHON) -m venv $(TYPECHECK_VENV)
	$(TYPECHECK_VENV)/bin/python -m pip install -r requirements-typecheck.txt
	touch $@

typecheck: $(TYPECHECK_VENV)/.stamp
	mkdir -p $(TYPECHECK_SRC)
	ln -sfn "$(CURDIR)" $(TYPECHECK_SRC)/tetrig
	MYPYPATH=$(TYPECHECK_SRC) $(TYPECHECK_VENV)/bin/python -m mypy --config-file mypy.ini \
		$(TYPECHECK_TARGETS)

build: venv
	$(VENV)/bin/python scripts/build_extension.py --output-dir dist \
		$(foreach p,$(PLATFORMS),--platform $(p))

demo: venv
	$(VENV)/bin/python scripts/demo.py $(MESH)

real-blender-check: venv
	../shared/tools/real-blender/setup.sh
	$(VENV)/bin/python -m pytest -q tests/real_blender/check_real_blender.py

bench: venv
	$(VENV)/bin/python -m pip install -q -r benchmarks/requirements.txt
	$(VENV)/bin/python benchmarks/run.py $(if $(QUICK),--quick) $(if $(REV),--rev $(REV))

clean:
	rm -rf dist .pytest_cache .mypy_cache
	find . -path ./.git -prune -o -path './.venv*' -prune -o -name __pycache__ -type d \
		-exec rm -rf {} +

distclean: clean
	rm -rf $(VENV) $(TYPECHECK_VENV) wheels
