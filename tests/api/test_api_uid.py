"""uids are uuid4 text drawn from the seeded rng: the same seed replays the same uids, as before."""

from __future__ import annotations

import random
import uuid

from hypothesis import given
from hypothesis import strategies as st

from kconsole.api.admission.metadata import new_uid


@given(st.integers(min_value=0, max_value=2**32))
def test_uid_is_the_uuid4_of_the_next_128_random_bits(seed: int) -> None:
    mine, reference = random.Random(seed), random.Random(seed)
    for _ in range(3):
        uid = new_uid(mine)
        assert uid == str(uuid.UUID(int=reference.getrandbits(128), version=4))
        assert uuid.UUID(uid).version == 4 and uuid.UUID(uid).variant == uuid.RFC_4122
