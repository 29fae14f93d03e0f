//! Property tests of issue #24's two mechanisms against hostile numbers and streams: the
//! [`Budget`] every count goes through, and the bounded reader every input goes through.
//! Whatever the numbers and bytes, nothing panics, nothing past a budget is accepted,
//! and a reader never holds more than its budget (plus the one byte that tells "at the
//! limit" from "over it").

use std::io::Read;

use proptest::prelude::*;
use subsim_engine::budget::Budget;
use subsim_scenario::read::{BoundedLines, ReadError};

/// Hostile counts: the edges of u64, powers of two around them, and anything.
fn count() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        Just(1),
        Just(u64::MAX),
        Just(u64::MAX - 1),
        Just(1 << 32),
        Just(1 << 63),
        (0u32..64).prop_map(|shift| 1u64 << shift),
        any::<u64>(),
        0u64..1_000,
    ]
}

/// A reader that hands out `chunk` bytes at a time from `bytes`, then (if `endless`)
/// newlines or zeros forever, like a pipe or /dev/zero.
struct Stream {
    bytes: Vec<u8>,
    at: usize,
    chunk: usize,
    endless: Option<u8>,
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let want = buf.len().min(self.chunk.max(1));
        if self.at < self.bytes.len() {
            let n = want.min(self.bytes.len() - self.at);
            buf[..n].copy_from_slice(&self.bytes[self.at..self.at + n]);
            self.at += n;
            return Ok(n);
        }
        match self.endless {
            Some(byte) => {
                buf[..want].fill(byte);
                Ok(want)
            }
            None => Ok(0),
        }
    }
}

/// Bytes with hostile lines: long runs, CR LF, byte-order marks, invalid UTF-8.
fn bytes() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(b"\n".to_vec()),
        Just(b"\r\n".to_vec()),
        Just("\u{feff}".as_bytes().to_vec()),
        Just(vec![0xff]),
        Just(vec![0xe2, 0x82]),
        Just(vec![0u8]),
        (1usize..300).prop_map(|n| vec![b'x'; n]),
        proptest::collection::vec(any::<u8>(), 0..20),
    ];
    proptest::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
}

/// The case the property found: a stream of only a byte-order mark (here handed out one
/// byte at a time, as a pipe may) read as one empty line, where the text is empty.
#[test]
fn a_byte_order_mark_alone_reads_as_no_lines() {
    for chunk in [1, 2, 3, 64] {
        let stream = Stream {
            bytes: vec![239, 187, 191],
            at: 0,
            chunk,
            endless: None,
        };
        let lines: Vec<_> = BoundedLines::new(
            stream,
            Budget::new("total", 16, "bytes", None),
            Budget::new("line", 16, "bytes", None),
        )
        .collect::<Result<_, _>>()
        .unwrap_or_else(|error| panic!("{error}"));
        assert!(lines.is_empty(), "chunk {chunk}: {lines:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    #[test]
    fn budgets_accept_exactly_the_counts_within(limit in count(), counts in proptest::collection::vec(count(), 0..5)) {
        let budget = Budget::new("test", limit, "things", Some("--max-things N"));
        let exact = counts.iter().try_fold(1u64, |product, count| product.checked_mul(*count));
        match (budget.check_product("p", &counts), exact) {
            (Ok(product), Some(exact)) => {
                prop_assert_eq!(product, exact);
                prop_assert!(product <= limit);
            }
            (Err(over), Some(exact)) => {
                prop_assert!(exact > limit);
                prop_assert_eq!(over.count, Some(exact));
                let message = over.to_string();
                prop_assert!(message.contains("--max-things N"), "{}", message);
            }
            (Err(over), None) => prop_assert_eq!(over.count, None),
            (Ok(product), None) => prop_assert!(false, "an overflow passed as {}", product),
        }
        for count in &counts {
            prop_assert_eq!(budget.check("c", *count).is_ok(), *count <= limit);
            if let Ok(size) = budget.check_usize("c", *count) {
                prop_assert_eq!(size as u64, *count);
            }
        }
    }

    #[test]
    fn bounded_lines_never_pass_their_budgets(
        data in bytes(),
        total in 0u64..2_000,
        line in 0u64..400,
        chunk in 1usize..64,
        endless in prop_oneof![Just(None), Just(Some(b'\n')), Just(Some(0u8))],
    ) {
        let stream = Stream { bytes: data.clone(), at: 0, chunk, endless };
        let mut lines = BoundedLines::new(
            stream,
            Budget::new("total", total, "bytes", Some("--max-total N")),
            Budget::new("line", line, "bytes", None),
        );
        let mut seen = 0usize;
        let mut previous = 0usize;
        for item in lines.by_ref() {
            match item {
                Ok((number, text)) => {
                    prop_assert_eq!(number, previous + 1);
                    previous = number;
                    prop_assert!(text.len() as u64 <= line, "a line past its budget");
                    prop_assert!(!text.contains('\n'));
                    seen += 1;
                }
                Err(ReadError::TooLarge(over)) => {
                    prop_assert!(over.budget.name == "total" || over.budget.name == "line");
                }
                Err(ReadError::NotUtf8 { line: at, .. }) => prop_assert_eq!(at, previous + 1),
                Err(ReadError::Io(message)) => prop_assert!(false, "{}", message),
            }
            // An endless stream ends at the total budget: one line per byte at most.
            prop_assert!(seen as u64 <= total + 1);
        }
        prop_assert!(lines.bytes_read() <= total + 1, "read {} of {}", lines.bytes_read(), total);
        if endless.is_none() && data.len() as u64 <= total.min(line) {
            // Within both budgets, valid text comes back whole, line by line.
            if let Ok(text) = std::str::from_utf8(&data) {
                let again: Vec<String> = BoundedLines::new(
                    text.as_bytes(),
                    Budget::new("total", total, "bytes", None),
                    Budget::new("line", line, "bytes", None),
                )
                .map(|item| item.map(|(_, line)| line))
                .collect::<Result<_, _>>()
                .unwrap_or_default();
                // One leading byte-order mark is dropped.
                let expected: Vec<&str> =
                    text.strip_prefix('\u{feff}').unwrap_or(text).lines().collect();
                prop_assert_eq!(again, expected);
            }
        }
    }
}
