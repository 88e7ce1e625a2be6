//! [`Timers`]: scripts waiting on a clock, as a hashed timing wheel
//! (Varghese and Lauck, "Hashed and hierarchical timing wheels", 1987).
//!
//! Deadlines fall into slots of 2^20 ns (about a millisecond); a ring of
//! [`SLOTS`] buckets holds the slots from `cursor` on (about a second), and
//! deadlines beyond the ring wait in `far` until the ring reaches them. A
//! timer costs one link in and one unlink out, with no comparison against
//! the others: a binary heap's cache-missing sift per timer measured at
//! over half of a tick of 1,000 due scripts among 10,000, and a sorted
//! array's merge at a fifth. Buckets are lists through one array of
//! entries reused through a free list, so a steady game allocates nothing.
//! The order timers come out in is not their deadline order; the gather
//! sorts what is due by start order anyway.

use std::time::Duration;

/// log2 of a slot's length in nanoseconds.
const SLOT_SHIFT: u32 = 20;

/// Buckets in the ring.
const SLOTS: u64 = 1024;

/// The end of a list.
const NONE: u32 = u32::MAX;

/// A timer: when it fires (nanoseconds of its clock), the script's serial
/// and slot, and the next timer of its list.
#[derive(Debug, Clone, Copy)]
struct Entry {
    at: u64,
    serial: u64,
    key: u32,
    next: u32,
}

/// One clock's timers.
///
/// Every timer is an entry of `entries`, linked into one list: its
/// bucket's, `far`'s, or the free list. Invariants: every timer whose slot
/// is before `cursor + SLOTS` is in bucket `slot % SLOTS` (a timer whose
/// slot had passed when pushed is in `cursor`'s bucket), and no bucket
/// holds a timer of a slot before `cursor`; every other timer is in `far`,
/// and `far_first` is at most the smallest slot there (`u64::MAX` when it
/// is empty). Entries are reused through the free list, so once `entries`
/// has grown to the most timers ever pending, filing allocates nothing
/// (per-bucket arrays would: the bucket a tick's timers land in shifts
/// from lap to lap, and each new one grows).
#[derive(Debug)]
pub(super) struct Timers {
    entries: Vec<Entry>,
    /// Each bucket's first entry.
    heads: Box<[u32]>,
    far: u32,
    free: u32,
    /// The first slot whose bucket may hold timers.
    cursor: u64,
    far_first: u64,
}

impl Default for Timers {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
            heads: vec![NONE; SLOTS as usize].into_boxed_slice(),
            far: NONE,
            free: NONE,
            cursor: 0,
            far_first: u64::MAX,
        }
    }
}

/// A deadline as nanoseconds, saturating (584 years of simulation time).
fn nanos(at: Duration) -> u64 {
    u64::try_from(at.as_nanos()).unwrap_or(u64::MAX)
}

fn slot(at: u64) -> u64 {
    at >> SLOT_SHIFT
}

impl Timers {
    /// Files a timer for the script (`serial`, `key`) at `at`.
    pub(super) fn push(&mut self, at: Duration, serial: u64, key: u32) {
        let entry = Entry {
            at: nanos(at),
            serial,
            key,
            next: NONE,
        };
        let index = match self.free {
            NONE => {
                let index = u32::try_from(self.entries.len()).expect("fewer than 2^32 timers");
                self.entries.push(entry);
                index
            }
            index => {
                self.free = self.entries[index as usize].next;
                self.entries[index as usize] = entry;
                index
            }
        };
        self.file(index);
    }

    /// Links entry `index` into its bucket, or `far`.
    fn file(&mut self, index: u32) {
        let slot = slot(self.entries[index as usize].at).max(self.cursor);
        let head = if slot - self.cursor < SLOTS {
            &mut self.heads[(slot % SLOTS) as usize]
        } else {
            self.far_first = self.far_first.min(slot);
            &mut self.far
        };
        self.entries[index as usize].next = *head;
        *head = index;
    }

    /// Moves every timer due at `now` into `due` as (serial, key). A `now`
    /// before the last one (a clock set back, a restored save) rewinds the
    /// ring first: what is due depends on `now` only, never on the path.
    pub(super) fn take_due(&mut self, now: Duration, due: &mut Vec<(u64, u32)>) {
        let now = nanos(now);
        let target = slot(now);
        if target < self.cursor {
            self.rewind(target);
        }
        // Whole slots before `target` are due (at most one lap of the
        // ring), then what is due by `now` in `target`'s own bucket.
        let whole = (target - self.cursor).min(SLOTS);
        for slot in self.cursor..self.cursor + whole {
            let list = std::mem::replace(&mut self.heads[(slot % SLOTS) as usize], NONE);
            self.take_list(list, u64::MAX, due);
        }
        self.cursor = target;
        let list = std::mem::replace(&mut self.heads[(target % SLOTS) as usize], NONE);
        self.take_list(list, now, due);
        if self.far_first < self.cursor + SLOTS {
            let list = std::mem::replace(&mut self.far, NONE);
            self.far_first = u64::MAX;
            self.take_list(list, now, due);
        }
    }

    /// Walks `list`: entries due by `now` go to `due` and the free list,
    /// the others are filed again.
    fn take_list(&mut self, mut list: u32, now: u64, due: &mut Vec<(u64, u32)>) {
        while list != NONE {
            let entry = self.entries[list as usize];
            let index = list;
            list = entry.next;
            if entry.at <= now {
                due.push((entry.serial, entry.key));
                self.entries[index as usize].next = self.free;
                self.free = index;
            } else {
                self.file(index);
            }
        }
    }

    /// Files every timer again around `cursor` (before the current one):
    /// each in its own slot's bucket, the new cursor's when its slot is
    /// already behind it, or `far`; the invariants hold afresh.
    #[cold]
    fn rewind(&mut self, cursor: u64) {
        let mut all = NONE;
        for bucket in 0..=SLOTS as usize {
            let head = match self.heads.get_mut(bucket) {
                Some(head) => head,
                None => &mut self.far,
            };
            let mut list = std::mem::replace(head, NONE);
            while list != NONE {
                let next = self.entries[list as usize].next;
                self.entries[list as usize].next = all;
                all = list;
                list = next;
            }
        }
        self.cursor = cursor;
        self.far_first = u64::MAX;
        while all != NONE {
            let next = self.entries[all as usize].next;
            self.file(all);
            all = next;
        }
    }

    /// The slot the ring starts at: where the last `take_due` left it.
    pub(super) fn position(&self) -> u64 {
        self.cursor
    }

    /// Forgets every timer and puts the ring at `position` (a saved
    /// [`position`](Self::position)), as if the last take had been there.
    pub(super) fn reset(&mut self, position: u64) {
        self.clear();
        self.cursor = position.min(slot(u64::MAX));
    }

    /// Forgets every timer.
    pub(super) fn clear(&mut self) {
        self.entries.clear();
        self.heads.fill(NONE);
        self.far = NONE;
        self.free = NONE;
        self.far_first = u64::MAX;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn take(timers: &mut Timers, now: Duration) -> Vec<(u64, u32)> {
        let mut due = Vec::new();
        timers.take_due(now, &mut due);
        due.sort_unstable();
        due
    }

    #[test]
    fn takes_exactly_the_due_timers() {
        let ms = Duration::from_millis;
        let mut timers = Timers::default();
        for (at, serial) in [(30, 0), (10, 1), (20, 2), (10, 3)] {
            timers.push(ms(at), serial, serial as u32);
        }
        assert!(take(&mut timers, ms(5)).is_empty());
        assert_eq!(take(&mut timers, ms(10)), [(1, 1), (3, 3)]);
        timers.push(ms(15), 4, 4);
        timers.push(ms(40), 5, 5);
        timers.push(ms(1), 6, 6); // already past: due at the next take
        assert_eq!(take(&mut timers, ms(30)), [(0, 0), (2, 2), (4, 4), (6, 6)]);
        timers.clear();
        assert!(take(&mut timers, ms(100)).is_empty());
    }

    #[test]
    fn far_timers_and_long_jumps() {
        let secs = Duration::from_secs;
        let mut timers = Timers::default();
        // Beyond one lap of the ring (about 1.07 s), and within a slot of
        // each other.
        timers.push(secs(5), 0, 0);
        timers.push(secs(5) + Duration::from_nanos(1), 1, 1);
        timers.push(secs(3), 2, 2);
        timers.push(Duration::from_millis(500), 3, 3);
        assert!(take(&mut timers, secs(2)) == [(3, 3)]);
        assert!(take(&mut timers, secs(3)) == [(2, 2)]);
        assert!(take(&mut timers, secs(5)) == [(0, 0)]);
        assert!(take(&mut timers, secs(60)) == [(1, 1)]);
        // A jump of many laps at once fires everything due.
        for serial in 0..100u64 {
            timers.push(Duration::from_millis(60_000 + serial * 37), serial, 0);
        }
        assert_eq!(take(&mut timers, secs(3_600)).len(), 100);
    }

    #[test]
    fn a_clock_set_back_rewinds_the_ring() {
        let ms = Duration::from_millis;
        let mut timers = Timers::default();
        timers.push(ms(2_500), 0, 0);
        timers.push(ms(9_000), 1, 1);
        assert!(take(&mut timers, ms(2_000)).is_empty());
        // Back to 10 ms (a restored save): a new 20 ms timer fires at 20 ms,
        // not when the clock is back at 2 s; the old ones keep their times.
        timers.push(ms(20), 2, 2);
        assert!(take(&mut timers, ms(10)).is_empty());
        assert_eq!(take(&mut timers, ms(20)), [(2, 2)]);
        assert!(take(&mut timers, ms(2_400)).is_empty());
        assert_eq!(take(&mut timers, ms(2_500)), [(0, 0)]);
        // Reset to a saved position: as if the last take had been there.
        timers.reset(slot(nanos(ms(100))));
        timers.push(ms(150), 3, 3);
        timers.push(ms(50), 4, 4); // already past: due at the next take
        assert_eq!(take(&mut timers, ms(100)), [(4, 4)]);
        assert_eq!(take(&mut timers, ms(150)), [(3, 3)]);
    }

    #[test]
    fn random_against_a_sorted_list() {
        // A small deterministic generator: no dependency for one test.
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut timers = Timers::default();
        let mut model: Vec<(u64, u64)> = Vec::new();
        let mut now = 0u64;
        let rounds = if cfg!(miri) { 30 } else { 2_000 };
        for serial in 0..rounds {
            let at = now + next() % 3_000_000_000;
            timers.push(Duration::from_nanos(at), serial, serial as u32);
            model.push((at, serial));
            if next() % 3 == 0 {
                // Mostly forward; now and then back (a clock set back).
                if next() % 8 == 0 {
                    now = now.saturating_sub(next() % 2_000_000_000);
                } else {
                    now += next() % 200_000_000;
                }
                let got = take(&mut timers, Duration::from_nanos(now));
                let mut want: Vec<(u64, u32)> = model
                    .iter()
                    .filter(|&&(at, _)| at <= now)
                    .map(|&(_, serial)| (serial, serial as u32))
                    .collect();
                want.sort_unstable();
                model.retain(|&(at, _)| at > now);
                assert_eq!(got, want, "at {now} ns");
            }
        }
    }
}
