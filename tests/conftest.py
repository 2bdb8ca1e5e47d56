"""Test configuration: under CI (the ``CI`` variable set) hypothesis runs derandomized, so a submission's
result does not depend on the draw; locally it explores new examples every run."""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

# the tests read the app's English text: run them in English whatever the machine's locale says
# (tests/test_i18n.py switches languages itself)
os.environ["SANDBOX_LANG"] = "en"
# every call of a kernel marked same_types goes through numba's type check, and one with other types than
# its first call's fails (engine/core/jit.py: SameTypesDispatcher); read when jit.py is imported
os.environ["SANDBOX_CHECK_KERNEL_TYPES"] = "1"
