//! The auto-mode classifier's verdicts (HANDBACK-7/8), `classifier:` in the session and in
//! a `spawn` step: one reader for both, so neither module imports the other.

use subsim_engine::spec::ClassifierSpec;
use subsim_rules::handback::ReviewOutcome;

use crate::check::Ctx;
use crate::raw::Node;

const CLASSIFIER_KEYS: [&str; 2] = ["launch", "review"];
const LAUNCH_VERDICTS: [&str; 2] = ["allow", "block"];

/// `{launch: allow|block, review: clean|flagged|refused|unavailable}`; a verdict left out
/// keeps the one in `base` (the documented defaults, or the session's for a spawn).
pub(crate) fn classifier(
    ctx: &mut Ctx<'_>,
    node: &Node,
    base: ClassifierSpec,
) -> Option<ClassifierSpec> {
    let fields = ctx.fields(node, "`classifier`", &CLASSIFIER_KEYS)?;
    let mut verdicts = base;
    let mut ok = true;
    if let Some(value) = fields.get("launch") {
        match ctx.choice(value, "launch verdict", &LAUNCH_VERDICTS) {
            Some(verdict) => verdicts.launch_blocks = verdict == "block",
            None => ok = false,
        }
    }
    if let Some(value) = fields.get("review") {
        let spellings = ReviewOutcome::ALL.map(ReviewOutcome::as_str);
        match ctx.choice(value, "review verdict", &spellings) {
            Some(verdict) => {
                verdicts.review = ReviewOutcome::ALL
                    .into_iter()
                    .find(|outcome| outcome.as_str() == verdict)
                    .unwrap_or_default();
            }
            None => ok = false,
        }
    }
    ok.then_some(verdicts)
}
