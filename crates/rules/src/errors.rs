//! ERR — what happens when an API error hits a subagent's run (ERR-1…6).
//!
//! [`on_api_error`] takes the facts about the error and the run and returns one decision:
//! ask the subagent to continue (ERR-1), switch it to a fallback model (ERR-5), end it
//! with partial output (ERR-3), end it as failed (ERR-3 foreground, ERR-4 background), or —
//! before v2.1.199 — return the error text as if it were the subagent's findings (ERR-2).
//!
//! It is not for deciding who receives the result ([`crate::notify`]) or for resuming a
//! failed subagent once the error is resolved (ERR-6 is an ordinary resume, RESUME-8).
//!
//! # Decisions
//! - **Q-15**: the continuation budget is an input; [`DEFAULT_CONTINUATION_BUDGET`] is 3.
//!   Once `continuations_used` reaches it, the cut ends the run like any other error.
//! - **Order**: a failure the fallback chain covers switches models first (ERR-5: the
//!   subagent "keeps working instead of ending in the error"); then a mid-stream text-only
//!   cut asks for a continuation (ERR-1); only then does the run end.
//! - **Which errors a chain covers**: an input (`fallback_chain_covers`), with
//!   [`ApiErrorKind::chain_covers`] as the default reading — only `model_unavailable`, the
//!   one example the seeds give.
//! - **Texts** (Q-16): the ERR-3 failure starts with the verbatim
//!   [`messages::API_ERROR_TERMINATED`]; the partial-output note, the error details, the
//!   background message and the pre-v2.1.199 `API Error: …` text are placeholders.

use crate::messages;
use crate::{Gates, Mode, RuleId};

/// the default number of continuation requests before a mid-stream cut ends the run.
pub const DEFAULT_CONTINUATION_BUDGET: u32 = 3;

/// The API errors the simulator distinguishes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ApiErrorKind {
    /// A rate limit.
    RateLimit,
    /// A usage limit.
    UsageLimit,
    /// The API is overloaded.
    Overloaded,
    /// A (repeated) server error.
    Server,
    /// The model is unavailable.
    ModelUnavailable,
}

impl ApiErrorKind {
    /// The scenario and trace spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ApiErrorKind::RateLimit => "rate_limit",
            ApiErrorKind::UsageLimit => "usage_limit",
            ApiErrorKind::Overloaded => "overloaded",
            ApiErrorKind::Server => "server",
            ApiErrorKind::ModelUnavailable => "model_unavailable",
        }
    }

    /// The error detail that follows a failure message (placeholder wording, Q-16).
    pub fn detail(self) -> &'static str {
        match self {
            ApiErrorKind::RateLimit => "rate limit reached",
            ApiErrorKind::UsageLimit => "usage limit reached",
            ApiErrorKind::Overloaded => "API overloaded",
            ApiErrorKind::Server => "server error",
            ApiErrorKind::ModelUnavailable => "model unavailable",
        }
    }

    /// ERR-5: does a configured fallback chain cover this error? The seeds' one example is
    /// an unavailable model, and the project reads no more into it.
    pub fn chain_covers(self) -> bool {
        self == ApiErrorKind::ModelUnavailable
    }
}

/// The facts [`on_api_error`] decides on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ApiErrorInput<'a> {
    /// Which error.
    pub kind: ApiErrorKind,
    /// Where the subagent runs (ERR-3 foreground, ERR-4 background).
    pub mode: Mode,
    /// The run had already produced text output (ERR-3).
    pub produced_text: bool,
    /// The run's only output was tool calls (ERR-3; the v2.1.199 quirk).
    pub tool_calls_only: bool,
    /// ERR-1: the response was cut mid-stream and the partial response holds text but no
    /// tool calls.
    pub mid_stream: bool,
    /// Continuation requests already made for this run (ERR-1).
    pub continuations_used: u32,
    /// How many continuation requests are allowed (Q-15; [`DEFAULT_CONTINUATION_BUDGET`]).
    pub budget: u32,
    /// ERR-5: a fallback chain is configured and covers this failure.
    pub fallback_chain_covers: bool,
    /// ERR-5: the first model in the chain that accepts the request, if any.
    pub fallback_model: Option<&'a str>,
}

impl<'a> ApiErrorInput<'a> {
    /// An input with no output, no mid-stream cut, no fallback chain and the default budget.
    pub fn new(kind: ApiErrorKind, mode: Mode) -> ApiErrorInput<'a> {
        ApiErrorInput {
            kind,
            mode,
            produced_text: false,
            tool_calls_only: false,
            mid_stream: false,
            continuations_used: 0,
            budget: DEFAULT_CONTINUATION_BUDGET,
            fallback_chain_covers: false,
            fallback_model: None,
        }
    }
}

/// What happens to the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorAction {
    /// ERR-1: ask the subagent to continue; the run goes on.
    Continue {
        /// Which continuation request this is, counted from 1.
        attempt: u32,
    },
    /// ERR-5: switch the subagent to this model; the run goes on.
    SwitchModel(String),
    /// ERR-3: the run ends; the Agent tool returns the partial output with a note.
    Partial {
        /// The note that the subagent was cut off (placeholder, Q-16).
        note: &'static str,
        /// v2.1.199 exactly, tool-calls-only: the partial result is empty, only the note.
        empty: bool,
    },
    /// ERR-3: a foreground run fails with this message.
    Failed {
        /// `Agent terminated early due to an API error`, then `: ` and the detail.
        message: String,
    },
    /// ERR-4: a background run is marked failed; the message Claude receives names the
    /// error and includes the last output.
    FailedBackground {
        /// The message start naming the error (placeholder, Q-16).
        message: String,
        /// Always true: partial work is not lost.
        includes_last_output: bool,
    },
    /// ERR-2, before v2.1.199: the run ends and its error text is returned as if it were
    /// the subagent's findings.
    ErrorAsFindings {
        /// The error text returned as the result.
        text: String,
    },
}

impl ErrorAction {
    /// Does the run keep going?
    pub fn continues(&self) -> bool {
        matches!(
            self,
            ErrorAction::Continue { .. } | ErrorAction::SwitchModel(_)
        )
    }

    /// The trace outcome of a run this action ends: `partial`, `failed` or `completed` (the
    /// pre-v2.1.199 error-as-findings case looked like a finished run). `None` while the
    /// run continues.
    pub fn outcome(&self) -> Option<&'static str> {
        match self {
            ErrorAction::Continue { .. } | ErrorAction::SwitchModel(_) => None,
            ErrorAction::Partial { .. } => Some("partial"),
            ErrorAction::Failed { .. } | ErrorAction::FailedBackground { .. } => Some("failed"),
            ErrorAction::ErrorAsFindings { .. } => Some("completed"),
        }
    }
}

/// The decision and the rule that made it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorDecision {
    /// What happens.
    pub action: ErrorAction,
    /// The rule that decided.
    pub rule: RuleId,
}

/// ERR-1…5: what an API error does to a subagent's run.
pub fn on_api_error(input: ApiErrorInput<'_>, gates: &Gates) -> ErrorDecision {
    // ERR-5: a covered failure moves to the first model in the chain that accepts it.
    if input.fallback_chain_covers {
        if let Some(model) = input.fallback_model {
            return ErrorDecision {
                action: ErrorAction::SwitchModel(model.to_string()),
                rule: "ERR-5",
            };
        }
    }
    // ERR-1 / Q-15: a mid-stream text-only cut asks the subagent to continue until the
    // budget is spent.
    if input.mid_stream && input.continuations_used < input.budget {
        return ErrorDecision {
            action: ErrorAction::Continue {
                attempt: input.continuations_used + 1,
            },
            rule: "ERR-1",
        };
    }
    if !gates.reports_failure {
        // ERR-2: before v2.1.199 the error text came back as if it were findings.
        return ErrorDecision {
            action: ErrorAction::ErrorAsFindings {
                text: format!("API Error: {}", input.kind.detail()),
            },
            rule: "ERR-2",
        };
    }
    if input.mode == Mode::Background {
        // ERR-4: marked failed; the message names the error and carries the last output.
        return ErrorDecision {
            action: ErrorAction::FailedBackground {
                message: format!(
                    "{} ({})",
                    messages::API_ERROR_BACKGROUND,
                    input.kind.detail()
                ),
                includes_last_output: true,
            },
            rule: "ERR-4",
        };
    }
    // ERR-3, foreground.
    if input.produced_text {
        return ErrorDecision {
            action: ErrorAction::Partial {
                note: messages::API_ERROR_PARTIAL_NOTE,
                empty: false,
            },
            rule: "ERR-3",
        };
    }
    if input.tool_calls_only && gates.tool_calls_only_empty_partial {
        // ERR-3 gate: in v2.1.199 exactly, an empty partial result holding only the note.
        return ErrorDecision {
            action: ErrorAction::Partial {
                note: messages::API_ERROR_PARTIAL_NOTE,
                empty: true,
            },
            rule: "ERR-3",
        };
    }
    ErrorDecision {
        action: ErrorAction::Failed {
            message: format!(
                "{}: {}",
                messages::API_ERROR_TERMINATED,
                input.kind.detail()
            ),
        },
        rule: "ERR-3",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Version;
    use ApiErrorKind::*;
    use Mode::*;

    fn gates(patch: u32) -> Gates {
        Gates::for_version(Version::v2_1(patch))
    }

    /// Runs `input` at `patch` and checks the action's shape and the rule.
    fn check(input: ApiErrorInput<'_>, patch: u32, expected: ErrorAction, rule: RuleId) {
        let decision = on_api_error(input, &gates(patch));
        assert_eq!(decision.action, expected, "{input:?} at 2.1.{patch}");
        assert_eq!(decision.rule, rule, "{input:?} at 2.1.{patch}");
    }

    fn fg(kind: ApiErrorKind) -> ApiErrorInput<'static> {
        ApiErrorInput::new(kind, Foreground)
    }

    fn terminated(detail: &str) -> ErrorAction {
        ErrorAction::Failed {
            message: format!("Agent terminated early due to an API error: {detail}"),
        }
    }

    const PARTIAL: ErrorAction = ErrorAction::Partial {
        note: messages::API_ERROR_PARTIAL_NOTE,
        empty: false,
    };
    const EMPTY_PARTIAL: ErrorAction = ErrorAction::Partial {
        note: messages::API_ERROR_PARTIAL_NOTE,
        empty: true,
    };

    #[test]
    fn err_1_continuations_q_15() {
        let cut = ApiErrorInput {
            mid_stream: true,
            produced_text: true,
            ..fg(Server)
        };
        check(cut, 292, ErrorAction::Continue { attempt: 1 }, "ERR-1");
        check(
            ApiErrorInput {
                continuations_used: 2,
                ..cut
            },
            292,
            ErrorAction::Continue { attempt: 3 },
            "ERR-1",
        );
        // Exhausted: ends like any error (foreground with text → partial).
        check(
            ApiErrorInput {
                continuations_used: 3,
                ..cut
            },
            292,
            PARTIAL,
            "ERR-3",
        );
        check(ApiErrorInput { budget: 0, ..cut }, 292, PARTIAL, "ERR-3");
        // Background too, and before v2.1.199 too.
        check(
            ApiErrorInput {
                mode: Background,
                ..cut
            },
            292,
            ErrorAction::Continue { attempt: 1 },
            "ERR-1",
        );
        check(cut, 150, ErrorAction::Continue { attempt: 1 }, "ERR-1");
        assert_eq!(DEFAULT_CONTINUATION_BUDGET, 3);
    }

    #[test]
    fn err_3_foreground_rows() {
        let text = ApiErrorInput {
            produced_text: true,
            ..fg(RateLimit)
        };
        check(text, 292, PARTIAL, "ERR-3");
        check(
            ApiErrorInput {
                produced_text: true,
                ..fg(Overloaded)
            },
            199,
            PARTIAL,
            "ERR-3",
        );
        check(fg(Server), 292, terminated("server error"), "ERR-3");
        check(
            fg(RateLimit),
            199,
            terminated("rate limit reached"),
            "ERR-3",
        );
        let tools_only = ApiErrorInput {
            tool_calls_only: true,
            ..fg(Overloaded)
        };
        check(tools_only, 292, terminated("API overloaded"), "ERR-3");
        check(tools_only, 200, terminated("API overloaded"), "ERR-3");
        // The v2.1.199-exactly quirk.
        check(tools_only, 199, EMPTY_PARTIAL, "ERR-3");
    }

    #[test]
    fn err_4_background_rows() {
        for input in [
            ApiErrorInput::new(Server, Background),
            ApiErrorInput {
                produced_text: true,
                ..ApiErrorInput::new(RateLimit, Background)
            },
            ApiErrorInput {
                tool_calls_only: true,
                ..ApiErrorInput::new(Overloaded, Background)
            },
        ] {
            let decision = on_api_error(input, &gates(292));
            assert_eq!(decision.rule, "ERR-4");
            let ErrorAction::FailedBackground {
                message,
                includes_last_output,
            } = decision.action
            else {
                panic!("{input:?}");
            };
            assert!(includes_last_output);
            assert!(message.contains(input.kind.detail()));
            // The quirk is foreground only.
            assert_eq!(on_api_error(input, &gates(199)).rule, "ERR-4");
        }
    }

    #[test]
    fn err_2_gate() {
        for mode in [Foreground, Background] {
            let input = ApiErrorInput {
                produced_text: true,
                ..ApiErrorInput::new(UsageLimit, mode)
            };
            check(
                input,
                198,
                ErrorAction::ErrorAsFindings {
                    text: "API Error: usage limit reached".into(),
                },
                "ERR-2",
            );
            assert_ne!(on_api_error(input, &gates(199)).rule, "ERR-2");
        }
    }

    #[test]
    fn err_5_fallback_chain() {
        let covered = ApiErrorInput {
            fallback_chain_covers: true,
            fallback_model: Some("sonnet"),
            ..fg(ModelUnavailable)
        };
        check(
            covered,
            292,
            ErrorAction::SwitchModel("sonnet".into()),
            "ERR-5",
        );
        check(
            ApiErrorInput {
                mode: Background,
                mid_stream: true,
                ..covered
            },
            150,
            ErrorAction::SwitchModel("sonnet".into()),
            "ERR-5",
        );
        // No model in the chain accepts: the error ends the run.
        check(
            ApiErrorInput {
                fallback_model: None,
                ..covered
            },
            292,
            terminated("model unavailable"),
            "ERR-3",
        );
        // A chain that does not cover the error is not used.
        check(
            ApiErrorInput {
                fallback_chain_covers: false,
                ..covered
            },
            292,
            terminated("model unavailable"),
            "ERR-3",
        );
        assert!(ModelUnavailable.chain_covers());
        assert!(!RateLimit.chain_covers());
    }

    #[test]
    fn outcomes_and_continuing() {
        assert!(ErrorAction::Continue { attempt: 1 }.continues());
        assert!(ErrorAction::SwitchModel("x".into()).continues());
        // Every action that ends the run says so (a mutant `cargo mutants` found alive).
        assert!(!PARTIAL.continues());
        assert!(!terminated("x").continues());
        assert!(!ErrorAction::ErrorAsFindings { text: "e".into() }.continues());
        assert_eq!(PARTIAL.outcome(), Some("partial"));
        assert_eq!(terminated("x").outcome(), Some("failed"));
        assert_eq!(
            ErrorAction::ErrorAsFindings { text: "e".into() }.outcome(),
            Some("completed")
        );
        assert_eq!(ErrorAction::Continue { attempt: 1 }.outcome(), None);
        let spellings: Vec<&str> = [RateLimit, UsageLimit, Overloaded, Server, ModelUnavailable]
            .iter()
            .map(|k| k.as_str())
            .collect();
        assert_eq!(
            spellings,
            [
                "rate_limit",
                "usage_limit",
                "overloaded",
                "server",
                "model_unavailable"
            ]
        );
    }
}
