//! Each run's behaviour stream (a ChaCha8 stream seeded from the session seed and the
//! agent id), kept compactly: an agent's record holds only how many words of its stream
//! it has drawn, and the few streams being drawn from live in a small cache here.
//!
//! Rules of the cache, written before the code: a stream is a pure function of
//! `(seed, agent id)`, and a draw is a pure function of the stream and the word position,
//! so the record's position is the truth and a cached stream only saves re-making it.
//! After every draw the record's position is set to the cached stream's, so a cached
//! stream of agent `id` is always at the position `id`'s record holds; a stream evicted
//! from the cache is dropped without a write-back, and re-made at that position
//! (`set_word_pos`) on its agent's next draw. Which streams are cached never changes a
//! value drawn (unit test below; debug builds compare the positions on every draw).
//!
//! Not kept in the record: a stream with its block buffer is ~320 bytes, and a run that
//! draws once and then waits (a worker's `work: exp(…)`) held it boxed for its whole run —
//! in a fan-out of a million waiting workers, hundreds of megabytes and a cold box per wake.

use rand_chacha::ChaCha8Rng;

use crate::event::AgentId;

/// How many streams the cache keeps (direct-mapped by agent id): runs that draw in turn
/// with up to this many others keep their buffer between draws.
const WAYS: usize = 64;

/// The cached streams, by `id % WAYS`.
pub(super) struct Streams {
    seed: u64,
    ways: Vec<Option<(AgentId, ChaCha8Rng)>>,
}

impl Streams {
    /// No stream cached yet; streams are derived from `seed`.
    pub(super) fn new(seed: u64) -> Streams {
        Streams {
            seed,
            ways: (0..WAYS).map(|_| None).collect(),
        }
    }

    /// Agent `id`'s behaviour stream at word position `*words` (0: never drawn from), for
    /// `draw` to take values from; `*words` is advanced past what it took.
    #[inline]
    pub(super) fn draw<T>(
        &mut self,
        id: AgentId,
        words: &mut u64,
        draw: impl FnOnce(&mut ChaCha8Rng) -> T,
    ) -> T {
        let way = &mut self.ways[id as usize % WAYS];
        let rng = match way {
            Some((owner, rng)) if *owner == id => {
                debug_assert_eq!(
                    position(rng),
                    *words,
                    "a cached stream is at its record's position"
                );
                rng
            }
            _ => {
                let mut rng = super::stream(self.seed, u64::from(id), super::purpose::BEHAVIOR);
                if *words != 0 {
                    rng.set_word_pos(u128::from(*words));
                }
                &mut way.insert((id, rng)).1
            }
        };
        let value = draw(rng);
        *words = position(rng);
        value
    }
}

/// The stream's word position (a stream would need 2^64 words drawn to pass `u64`).
#[inline]
fn position(rng: &ChaCha8Rng) -> u64 {
    rng.get_word_pos() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::Dist;

    /// Draws through the cache, with agents taking turns in an order that evicts streams
    /// (more agents than ways, some sharing a way) and mixes distributions that take one
    /// or more words, equal the draws of one stream per agent kept whole.
    #[test]
    fn cached_and_re_made_streams_draw_what_whole_streams_draw() {
        let seed = 42;
        // Ids past 64 × 64 too: the way is `id % WAYS` (a mutant dividing instead went
        // unseen with small ids only).
        let agents: Vec<AgentId> = (0..200)
            .chain([1000, 1064, 1128, 4_160, 1_000_000, 1_000_064])
            .collect();
        let mut whole: Vec<ChaCha8Rng> = agents
            .iter()
            .map(|&id| super::super::stream(seed, u64::from(id), super::super::purpose::BEHAVIOR))
            .collect();
        let mut words = vec![0u64; agents.len()];
        let mut streams = Streams::new(seed);
        let dists = [
            Dist::Exp { mean: 10e6 },
            Dist::Uniform {
                low: 1.0,
                high: 1e6,
            },
            Dist::Normal {
                mean: 5e6,
                std_dev: 2e6,
            },
            Dist::LogNormal {
                median: 1e6,
                sigma: 0.5,
            },
            Dist::Exp { mean: 3.0 },
        ];
        let mut turn = 0usize;
        for round in 0..40usize {
            for step in 0..agents.len() {
                // Visit agents in a scrambled order, a different one each round.
                let index = (step * 37 + round * 11) % agents.len();
                let dist = &dists[(index + round) % dists.len()];
                let expected = dist.sample(&mut whole[index]);
                let got = streams.draw(agents[index], &mut words[index], |rng| dist.sample(rng));
                assert_eq!(got, expected, "agent {} round {round}", agents[index]);
                // Now and then one agent draws many times in a row (a buffer refill).
                if turn.is_multiple_of(97) {
                    for _ in 0..70 {
                        let expected = dist.sample(&mut whole[index]);
                        let got =
                            streams.draw(agents[index], &mut words[index], |rng| dist.sample(rng));
                        assert_eq!(got, expected);
                    }
                }
                turn += 1;
            }
        }
    }
}
