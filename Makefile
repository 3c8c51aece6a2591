# TetRig developer tasks. The tests run twice: in .venv (Python 3.11, bpy 5.0.1 = Blender 5.0,
# NumPy 1.26) and in .venv313 (Python 3.13, bpy 5.2.3 = Blender 5.2 LTS, NumPy 2).
#
#   make venv        .venv with requirements-dev.txt (bpy 5.0.1, numpy, scipy, numba, pytest)
#   make venv313     .venv313 with requirements-dev-py313.txt (bpy 5.2.3, the same for 3.13)
#   make test        pytest over tests/ in both venvs side by side, then make typecheck (what .ci/run
#                    runs; TESTS=tests/test_x.py for fewer)
#   make test311     pytest in .venv only (make test313: in .venv313 only)
#   make typecheck   mypy over the Blender layer, in its own .venv-typecheck
#   make build       extension zips into dist/, one per platform and Python version (the
#                    linux-x64 ones with the kernels compiled: about 3 minutes a Python version)
#                    (PLATFORMS="linux-x64 ..." and PYTHONS="3.11 3.13" limit them)
#   make demo MESH=path/to/mesh
#   make jelly       scripts/jelly_demo.py: the seed's jelly sphere, a Surface body with pressure, dropped
#                    (PRESSURE=Pa, 0 for none) -> out/jelly.blend, out/jelly_summary.txt
#   make real-blender-check  renders, UI and install checks in the real Blender 4.3 (../shared/tools)
#   make bench       benchmarks/run.py (QUICK=1, REV=commit): timings, targets -> benchmarks/results.md
#   make bench-touching  benchmarks/touching.py (QUICK=1): two bunnies dropped onto each other against one
#                    alone, a pile of ten Jelly cubes -> benchmarks/touching.md (also part of make bench)
#   make bench-self  benchmarks/self_contact.py: a 40 x 40 cloth folding onto itself on a ball, TetRig's
#                    Self Collision vs Blender Cloth's -> benchmarks/self_contact.md (also part of make bench)
#   make bench-surface  benchmarks/surface.py (QUICK=1): Surface bodies at 10k and 100k vertices vs
#                    Blender's Soft Body on the same sphere -> benchmarks/surface.md (about 5 min)
#   make clean       build output and caches (make distclean: also venvs and wheels)
#
# Interpreters: PYTHON311 and PYTHON313 (e.g. make test PYTHON313=/opt/py313/bin/python3).
# Unset, each is the first of: pythonX.Y on PATH, then pyenv's newest X.Y
# ($PYENV_ROOT or ~/.pyenv, versions/X.Y.*/bin/pythonX.Y), that really runs as Python X.Y (a pyenv
# shim for a version that is not selected fails and is skipped).

# $(call find_python,3.13): the path of the first working Python 3.13 (empty if none).
find_python = $(shell for p in python$(1) $$(ls -d "$${PYENV_ROOT:-$$HOME/.pyenv}"/versions/$(1).*/bin/python$(1) \
	2>/dev/null | sort -rV); do [ "$$("$$p" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" \
	= $(1) ] && { command -v "$$p"; break; }; done)
ifeq ($(origin PYTHON311),undefined)
PYTHON311 := $(call find_python,3.11)
endif
ifeq ($(origin PYTHON313),undefined)
PYTHON313 := $(call find_python,3.13)
endif
VENV := .venv
VENV313 := .venv313
TYPECHECK_VENV := .venv-typecheck
# The repository root is the add-on package; mypy sees it through this link, named after the
# package, because the clone's own folder name is arbitrary (see mypy.ini).
TYPECHECK_SRC := $(TYPECHECK_VENV)/src
TYPECHECK_TARGETS := -m tetrig -p tetrig.operators -p tetrig.panels -p tetrig.runtime \
	-m tetrig.scripts.batch -m tetrig.scripts.demo -m tetrig.scripts.jelly_demo -m tetrig.scripts.load_addon
PLATFORMS ?=
PYTHONS ?=
MESH ?=
TESTS ?= tests
PRESSURE ?=

.PHONY: venv venv313 test test311 test313 typecheck build demo jelly bench bench-surface bench-touching bench-self \
	real-blender-check clean \
	distclean

venv: $(VENV)/.stamp
venv313: $(VENV313)/.stamp

# $(call make_venv,folder,interpreter,X.Y,requirements file,bpy version): checks that the
# interpreter is Python X.Y, creates the venv and installs the requirements into it.
define make_venv
	@[ -n "$(2)" ] || { echo "make: no working python$(3) found (PATH, pyenv): install Python $(3)" \
		"or run make with PYTHON$(subst .,,$(3))=/path/to/python$(3)" >&2; exit 1; }
	@$(2) -c 'import sys; sys.exit(sys.version_info[:2] != ($(subst .,$(comma),$(3))) and \
		"bpy $(5) needs Python $(3), but PYTHON$(subst .,,$(3))=$(2) is Python %d.%d" % sys.version_info[:2])'
	$(2) -m venv $(1)
	$(1)/bin/python -m pip install -r $(4)
	touch $(1)/.stamp
endef
comma := ,

$(VENV)/.stamp: requirements-dev.txt
	$(call make_venv,$(VENV),$(PYTHON311),3.11,requirements-dev.txt,5.0.1)

$(VENV313)/.stamp: requirements-dev-py313.txt
	$(call make_venv,$(VENV313),$(PYTHON313),3.13,requirements-dev-py313.txt,5.2.3)

# Both pytest runs and mypy always run; the status is a failure if any of them failed. The two
# pytest runs go side by side (each is one process, mostly on one core: on a 2-core machine the pair
# takes about as long as one), each into its own log, printed whole when both are done.
test: venv venv313
	@status=0; logs=$$(mktemp -d); \
	echo "== pytest in $(VENV) (Python 3.11, bpy 5.0.1, NumPy 1.26) and in $(VENV313) (Python 3.13," \
		"bpy 5.2.3, NumPy 2), side by side =="; \
	( $(VENV)/bin/python -m pytest -q $(TESTS) > $$logs/311.log 2>&1; echo $$? > $$logs/311.status ) & \
	( $(VENV313)/bin/python -m pytest -q $(TESTS) > $$logs/313.log 2>&1; echo $$? > $$logs/313.status ) & \
	wait; \
	echo "== pytest in $(VENV): Python 3.11, bpy 5.0.1, NumPy 1.26 =="; cat $$logs/311.log; \
	[ "$$(cat $$logs/311.status)" = 0 ] || status=1; \
	echo "== pytest in $(VENV313): Python 3.13, bpy 5.2.3, NumPy 2 =="; cat $$logs/313.log; \
	[ "$$(cat $$logs/313.status)" = 0 ] || status=1; \
	rm -rf $$logs; \
	$(MAKE) --no-print-directory typecheck || status=1; \
	exit $$status

test311: venv
	$(VENV)/bin/python -m pytest -q $(TESTS)

test313: venv313
	$(VENV313)/bin/python -m pytest -q $(TESTS)

$(TYPECHECK_VENV)/.stamp: requirements-typecheck.txt
	$(PYTHON311) -m venv $(TYPECHECK_VENV)
	$(TYPECHECK_VENV)/bin/python -m pip install -r requirements-typecheck.txt
	touch $@

typecheck: $(TYPECHECK_VENV)/.stamp
	mkdir -p $(TYPECHECK_SRC)
	ln -sfn "$(CURDIR)" $(TYPECHECK_SRC)/tetrig
	MYPYPATH=$(TYPECHECK_SRC) $(TYPECHECK_VENV)/bin/python -m mypy --config-file mypy.ini \
		$(TYPECHECK_TARGETS)

build: venv venv313
	$(VENV)/bin/python scripts/build_extension.py --output-dir dist \
		$(foreach p,$(PLATFORMS),--platform $(p)) $(foreach v,$(PYTHONS),--python $(v)) \
		--machine-code 3.11=$(VENV)/bin/python --machine-code 3.13=$(VENV313)/bin/python

demo: venv
	$(VENV)/bin/python scripts/demo.py $(MESH)

jelly: venv
	$(VENV)/bin/python scripts/jelly_demo.py $(if $(PRESSURE),--pressure $(PRESSURE))

real-blender-check: venv
	../shared/tools/real-blender/setup.sh
	$(VENV)/bin/python -m pytest -q tests/real_blender/check_real_blender.py

bench: venv
	$(VENV)/bin/python -m pip install -q -r benchmarks/requirements.txt
	$(VENV)/bin/python benchmarks/run.py $(if $(QUICK),--quick) $(if $(REV),--rev $(REV))
	$(VENV)/bin/python benchmarks/touching.py $(if $(QUICK),--quick)
	$(VENV)/bin/python benchmarks/self_contact.py

bench-touching: venv
	$(VENV)/bin/python benchmarks/touching.py $(if $(QUICK),--quick)

bench-self: venv
	$(VENV)/bin/python benchmarks/self_contact.py

bench-surface: venv
	$(VENV)/bin/python benchmarks/surface.py $(if $(QUICK),--quick)

clean:
	rm -rf dist .pytest_cache .mypy_cache
	find . -path ./.git -prune -o -path './.venv*' -prune -o -name __pycache__ -type d \
		-exec rm -rf {} +

distclean: clean
	rm -rf $(VENV) $(VENV313) $(TYPECHECK_VENV) wheels
