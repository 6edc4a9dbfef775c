"""Library error codes become the mapped Python exceptions, with the library's message."""

from __future__ import annotations

import pytest

import zeuscpp.exception as exc
from zeuscpp import _core


@pytest.mark.parametrize("code", _core._error_code_names)
def test_every_library_code_maps_to_its_class(code):
    with pytest.raises(exc.ZeusBaseError) as info:
        _core._raise_library_error(code, f"message for {code}")
    assert type(info.value) is exc.error_class_for_code(code)
    assert str(info.value) == info.value.message == f"message for {code}"
    assert info.value.code == code


# The upstream catch sites keep working: (code, what upstream code would catch).
@pytest.mark.parametrize(
    "code,caught_as",
    [
        ("invalid_argument", ValueError),
        ("invalid_argument", exc.ZeusGPUInvalidArgError),
        ("parse", ValueError),
        ("not_found", ValueError),
        ("not_found", exc.ZeusGPUNotFoundError),
        ("not_found", exc.ZeusCPUNotFoundError),
        ("already_exists", ValueError),
        ("no_permission", exc.ZeusGPUNoPermissionError),
        ("no_permission", exc.ZeusCPUNoPermissionError),
        ("no_permission", PermissionError),
        ("not_supported", exc.ZeusGPUNotSupportedError),
        ("driver_not_loaded", exc.ZeusGPUInitError),
        ("driver_not_loaded", exc.ZeusGPUDriverNotLoadedError),
        ("gpu_lost", exc.ZeusGPULostError),
        ("heterogeneous", exc.ZeusGPUHeterogeneousError),
        ("heterogeneous", ValueError),
        ("timeout", TimeoutError),
        ("io", OSError),
        ("failed_precondition", RuntimeError),
        ("internal", RuntimeError),
        ("unknown", exc.ZeusGPUUnknownError),
    ],
)
def test_upstream_catch_sites(code, caught_as):
    with pytest.raises(caught_as):
        _core._raise_library_error(code, "x")


def test_nvml_errors_carry_the_nvml_return_and_function(fake_nvml):
    from zeuscpp.device import get_gpus

    gpus = get_gpus()
    fake_nvml.set_lost(1, True)
    with pytest.raises(exc.ZeusGPULostError) as info:
        gpus.get_total_energy_consumption(1)
    assert info.value.nvml_return == 15
    assert info.value.nvml_function.startswith("nvmlDevice")


def test_a_lost_gpu_at_discovery_is_reported(fake_nvml):
    from zeuscpp.device import get_gpus

    fake_nvml.set_lost(1, True)
    with pytest.raises(exc.ZeusGPULostError, match="GPU is lost"):
        get_gpus()


def test_upstream_module_paths_export_the_names(fake_nvml):
    from zeuscpp.device import get_gpus
    from zeuscpp.device.cpu import ZeusCPUInitError, ZeusCPUNoPermissionError
    from zeuscpp.device.exception import ZeusBaseCPUError, ZeusBaseGPUError
    from zeuscpp.device.gpu import ZeusGPUNoPermissionError, ZeusGPUNotSupportedError
    from zeuscpp.exception import ZeusBaseError

    # The upstream paths name the very classes the library raises, in
    # upstream's hierarchy (a copy of a class would not catch the library's).
    assert ZeusGPUNoPermissionError is exc.ZeusGPUNoPermissionError
    assert ZeusGPUNotSupportedError is exc.ZeusGPUNotSupportedError
    assert ZeusCPUInitError is exc.ZeusCPUInitError
    assert ZeusCPUNoPermissionError is exc.ZeusCPUNoPermissionError
    assert ZeusBaseError is exc.ZeusBaseError
    assert issubclass(ZeusCPUInitError, ZeusBaseCPUError)
    assert issubclass(ZeusGPUNoPermissionError, ZeusBaseGPUError)
    assert issubclass(ZeusBaseGPUError, ZeusBaseError) and issubclass(ZeusBaseCPUError, ZeusBaseError)
    # An upstream catch site, written with the upstream path, catches what a
    # refused device call raises.
    fake_nvml.set_permission_denied(True)
    with pytest.raises(ZeusGPUNoPermissionError):
        get_gpus().set_power_management_limit(0, 300_000)


def test_base_error_behaves_like_upstreams():
    e = exc.ZeusBaseError("what to do")
    assert e.message == str(e) == "what to do"
    assert e.code is None
