"""boostwood's build backend: setuptools', plus numba and numpy in the build environment
when ``setup.py`` will compile the kernels (``BOOSTWOOD_COMPILE_ON_INSTALL``, on unless
set to 0). With the step off, building needs only setuptools, as before (an offline
wheelhouse, a platform without numba wheels where numba came from conda)."""
import os

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F401,F403  the PEP 517 hooks, unchanged

#: What compiling the kernels at build time needs (the same bounds as the dependencies).
COMPILE_REQUIRES = ["numba>=0.59", "numpy>=1.24"]


def compile_on_install():
    """False when ``BOOSTWOOD_COMPILE_ON_INSTALL`` is 0, false, no or off."""
    value = os.environ.get("BOOSTWOOD_COMPILE_ON_INSTALL", "1").strip().lower()
    return value not in ("0", "false", "no", "off")


def _extra():
    return list(COMPILE_REQUIRES) if compile_on_install() else []


def get_requires_for_build_wheel(config_settings=None):
    return _setuptools.get_requires_for_build_wheel(config_settings) + _extra()


def get_requires_for_build_editable(config_settings=None):
    return _setuptools.get_requires_for_build_editable(config_settings) + _extra()
