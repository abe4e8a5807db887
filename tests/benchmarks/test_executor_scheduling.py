"""CallSize: how many batches one Ray call carries (plain Python, no Ray)."""

import pytest

from humanize.benchmarks.runner.executors.scheduling import MAX_CALL_BATCHES, TARGET_CALL_SECONDS, CallSize


@pytest.mark.parametrize("workers, total", [(1, None), (4, None), (2, 1000), (1, 1), (3, 0)])
def test_one_batch_per_call_until_a_call_has_come_back(workers, total):
    sizer = CallSize(workers, total)
    assert sizer.size() == 1
    sizer.sent(1)
    assert sizer.size() == 1  # sending is not measuring
    sizer.observe(0.5, 0)  # nothing measured: a call of no batches, or a negative time
    sizer.observe(-1.0, 3)
    assert sizer.size() == 1


@pytest.mark.parametrize("per_batch", [0.001, 0.0123, 0.03, 0.05, 0.1, 0.2])
def test_a_call_carries_about_the_target_seconds_of_work(per_batch):
    sizer = CallSize(2, None)
    sizer.observe(per_batch * 3, 3)  # the seconds of a call of 3 batches
    size = sizer.size()
    assert 1 <= size <= MAX_CALL_BATCHES
    if size < MAX_CALL_BATCHES:
        # the most whole batches that fit in the target (to float rounding): one more would pass it
        fit = TARGET_CALL_SECONDS / per_batch
        assert fit - 1 - 1e-6 < size <= fit + 1e-6
    else:
        assert MAX_CALL_BATCHES * per_batch <= TARGET_CALL_SECONDS


def test_the_size_follows_the_measured_rate_as_it_changes():
    sizer = CallSize(1, None)
    sizer.observe(TARGET_CALL_SECONDS / 4, 1)
    assert sizer.size() == 4
    for _ in range(40):  # the work got 4 times slower: the calls shrink to match
        sizer.observe(TARGET_CALL_SECONDS, 1)
    assert sizer.size() == 1
    sizes = []
    for _ in range(40):  # then 8 times faster: they grow back, step by step, to about 8 batches
        sizer.observe(TARGET_CALL_SECONDS / 8 * 5, 5)
        sizes.append(sizer.size())
    assert sizes == sorted(sizes) and sizes[0] < 7 and sizes[-1] in (7, 8)


@pytest.mark.parametrize("seconds", [0.0, 1e-12, 1e-6, TARGET_CALL_SECONDS / (MAX_CALL_BATCHES + 1)])
def test_never_more_than_the_maximum_batches(seconds):
    sizer = CallSize(1, None)
    sizer.observe(seconds, 1)
    assert sizer.size() == MAX_CALL_BATCHES


@pytest.mark.parametrize("seconds", [TARGET_CALL_SECONDS * 1.01, 10.0, 1e9])
def test_slow_work_still_sends_one_batch(seconds):
    sizer = CallSize(8, 10_000)
    sizer.observe(seconds, 1)
    assert sizer.size() == 1


def test_a_fair_share_of_what_is_left_so_the_workers_finish_together():
    sizer = CallSize(2, 100)
    sizer.observe(0.0, 1)  # instant work: only the share limits the size
    assert sizer.size() == min(MAX_CALL_BATCHES, 100 // 4) == 25
    sizer.sent(25)
    assert sizer.size() == 75 // 4
    sizer.sent(70)
    assert sizer.size() == 1  # 5 left over 2 workers: one at a time, never 0
    sizer.sent(50)  # more than was left (a retry): still 1
    assert sizer.left == 0 and sizer.size() == 1


@pytest.mark.parametrize("workers, total, per_batch", [(1, 500, 0.0), (2, 1000, 0.001), (3, 77, 0.02),
                                                       (16, 5000, 0.0001), (2, 10, 0.0)])
def test_a_whole_job_never_sends_more_than_its_share(workers, total, per_batch):
    sizer = CallSize(workers, total)
    left, sizes = total, []
    while left > 0:
        size = sizer.size()
        assert 1 <= size <= MAX_CALL_BATCHES
        assert size <= max(1, left // (2 * workers))
        size = min(size, left)
        sizer.sent(size)
        sizer.observe(per_batch * size, size)
        left -= size
        sizes.append(size)
    assert sum(sizes) == total and sizer.left == 0
    assert sizes[-1] == 1  # the last calls are small, so no worker is left with a long tail


def test_an_unknown_total_is_limited_by_time_and_the_maximum_only():
    sizer = CallSize(4, None)
    sizer.observe(0.0, 1)
    sizer.sent(10**6)
    assert sizer.left is None and sizer.size() == MAX_CALL_BATCHES
    known = CallSize(4, 10)
    known.observe(0.0, 1)
    assert known.size() == 1  # the same rate with a total of 10 over 4 workers


def test_workers_below_one_count_as_one():
    for workers in (0, -3):
        sizer = CallSize(workers, 40)
        sizer.observe(0.0, 1)
        assert sizer.workers == 1 and sizer.size() == 40 // 2
