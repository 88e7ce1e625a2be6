//! The `plan_build` workload: random systems over a fixed set of services.
//!
//! Seeded and self-contained (a xorshift generator), so every run and every
//! peer plans the same graph.

/// A small, fast, seeded generator (xorshift64*).
#[derive(Debug, Clone)]
pub struct XorShift(u64);

impl XorShift {
    /// A generator from `seed` (any value; zero is remapped).
    pub fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A value in `0..bound` (`bound > 0`).
    pub fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound
    }
}

/// One system of the workload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SystemSpec {
    /// Distinct services touched: `(service, gated)`.
    pub accesses: Vec<(usize, bool)>,
    /// An earlier system this one runs after.
    pub after: Option<usize>,
}

/// `nodes` systems, each touching 1 to 4 distinct services of `services` (one
/// access in four gated), and one `after` edge to an earlier system per four
/// systems (so the graph stays acyclic).
pub fn systems(nodes: usize, services: usize, seed: u64) -> Vec<SystemSpec> {
    systems_with(nodes, services, 4, true, seed)
}

/// `nodes` systems, each touching 1 to `max_accesses` distinct services of
/// `services` (one access in four gated); with `after`, one system in four
/// also runs after a random earlier one.
pub fn systems_with(
    nodes: usize,
    services: usize,
    max_accesses: usize,
    after: bool,
    seed: u64,
) -> Vec<SystemSpec> {
    assert!((1..=services).contains(&max_accesses));
    let mut rng = XorShift::new(seed);
    (0..nodes)
        .map(|i| {
            let count = 1 + rng.below(max_accesses as u64) as usize;
            let mut accesses: Vec<(usize, bool)> = Vec::with_capacity(count);
            while accesses.len() < count {
                let service = rng.below(services as u64) as usize;
                if accesses.iter().all(|&(s, _)| s != service) {
                    accesses.push((service, rng.below(4) == 0));
                }
            }
            let after = (after && i > 0 && rng.below(4) == 0).then(|| rng.below(i as u64) as usize);
            SystemSpec { accesses, after }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workload_is_seeded_and_acyclic() {
        let a = systems(1000, 64, 7);
        assert_eq!(a, systems(1000, 64, 7));
        assert!(a.iter().all(|s| (1..=4).contains(&s.accesses.len())));
        assert!(
            a.iter()
                .enumerate()
                .all(|(i, s)| s.after.is_none_or(|j| j < i))
        );
        let afters = a.iter().filter(|s| s.after.is_some()).count();
        assert!((150..350).contains(&afters), "{afters}");
        let accesses: Vec<_> = a.iter().flat_map(|s| &s.accesses).collect();
        let gated = accesses.iter().filter(|(_, g)| *g).count();
        assert!(gated * 5 < accesses.len() * 2 && gated * 6 > accesses.len());
    }

    #[test]
    fn systems_without_edges() {
        let a = systems_with(1000, 16, 3, false, 7);
        assert!(a.iter().all(|s| (1..=3).contains(&s.accesses.len())));
        assert!(a.iter().all(|s| s.after.is_none()));
        assert!(a.iter().flat_map(|s| &s.accesses).all(|&(s, _)| s < 16));
    }
}
