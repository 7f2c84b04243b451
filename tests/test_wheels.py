import hashlib

import pytest

from mlrep.data import wheels
from mlrep.data.wheels import SourceError, WheelPin


def _pin_for(path, name="pkg"):
    return WheelPin(name, "1.0", path.name, hashlib.sha256(path.read_bytes()).hexdigest(), "MIT")


def test_pins_are_complete_and_in_priority_order():
    pins = wheels.pinned_wheels()
    assert [p.name for p in pins] == ["django", "sphinx", "wagtail", "weblate", "pretix"]
    assert all(len(p.sha256) == 64 and p.license and p.filename.endswith(".whl") for p in pins)
    assert [p.name for p in wheels.select(["pretix", "django"])] == ["django", "pretix"]


def test_unknown_package_is_a_clear_error():
    with pytest.raises(SourceError, match=r"unknown tiny-corpus package\(s\) \['flask'\]"):
        wheels.select(["flask"])


def test_present_verified_wheel_is_not_downloaded_again(tmp_path, monkeypatch):
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    wheel.write_bytes(b"wheel bytes")
    monkeypatch.setattr(wheels, "_download", lambda *a: pytest.fail("must not download"))
    assert wheels.fetch([_pin_for(wheel)], tmp_path) == [wheel]


def test_a_wheel_that_does_not_match_its_pin_is_rejected_with_the_fix(tmp_path):
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    wheel.write_bytes(b"wheel bytes")
    pin = _pin_for(wheel)
    wheel.write_bytes(b"tampered")
    with pytest.raises(
        SourceError, match=r"does not match the pin .* delete the file and fetch again"
    ):
        wheels.fetch([pin], tmp_path)
    assert wheel.read_bytes() == b"tampered"  # nothing is deleted behind the user's back
