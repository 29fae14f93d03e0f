//! MODEL — which model a subagent runs on (the core of MODEL-2; the rest of the MODEL
//! area — aliases, allowlists, FORCE, Explore — is refined in its own issue).

use crate::RuleId;

/// The inputs of MODEL-2's resolution order.
#[derive(Clone, Copy, Debug, Default)]
pub struct ModelInput<'a> {
    /// The per-invocation `model` parameter.
    pub invocation: Option<&'a str>,
    /// The definition's `model` field.
    pub definition: Option<&'a str>,
    /// `CLAUDE_CODE_SUBAGENT_MODEL`.
    pub env: Option<&'a str>,
    /// The main conversation's model.
    pub main: &'a str,
    /// The run is a fork (FORK-5: always the main model).
    pub fork: bool,
    /// MODEL-2's gate: the env var is third from v2.1.251, first before.
    pub env_last: bool,
}

/// MODEL-2: the first source that gives a model wins. `inherit` means the main model, and
/// `CLAUDE_CODE_SUBAGENT_MODEL=inherit` behaves like unset (MODEL-5).
pub fn resolve<'a>(input: ModelInput<'a>) -> (&'a str, RuleId) {
    if input.fork {
        return (input.main, "FORK-5");
    }
    let env = input.env.filter(|value| !value.is_empty() && *value != "inherit");
    if !input.env_last {
        if let Some(env) = env {
            return (env, "MODEL-2");
        }
    }
    if let Some(invocation) = input.invocation {
        return (if invocation == "inherit" { input.main } else { invocation }, "MODEL-2");
    }
    if let Some(definition) = input.definition {
        return (if definition == "inherit" { input.main } else { definition }, "MODEL-2");
    }
    if let Some(env) = env {
        return (env, "MODEL-2");
    }
    (input.main, "MODEL-2")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_and_gate() {
        let base = ModelInput { main: "opus", env_last: true, ..Default::default() };
        assert_eq!(resolve(base).0, "opus");
        assert_eq!(resolve(ModelInput { definition: Some("haiku"), ..base }).0, "haiku");
        assert_eq!(resolve(ModelInput { definition: Some("inherit"), ..base }).0, "opus");
        assert_eq!(resolve(ModelInput { invocation: Some("sonnet"), definition: Some("haiku"), ..base }).0, "sonnet");
        assert_eq!(resolve(ModelInput { env: Some("haiku"), ..base }).0, "haiku");
        assert_eq!(resolve(ModelInput { env: Some("haiku"), definition: Some("sonnet"), ..base }).0, "sonnet");
        assert_eq!(resolve(ModelInput { env: Some("inherit"), ..base }).0, "opus");
        let old = ModelInput { env_last: false, ..base };
        assert_eq!(resolve(ModelInput { env: Some("haiku"), definition: Some("sonnet"), ..old }).0, "haiku");
        assert_eq!(resolve(ModelInput { fork: true, env: Some("haiku"), ..base }).0, "opus");
    }
}
