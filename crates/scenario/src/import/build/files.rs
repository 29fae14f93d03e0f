//! Finding a session's subagent files (both layouts) and reading each transcript.

use super::super::read::Skipped;
use super::*;

/// The agent id of a subagent file name (`agent-<id>.jsonl`), or `None` for other files
/// and for compaction runs (`agent-acompact-*`).
pub(super) fn agent_file_id(name: &str) -> Option<&str> {
    let id = name.strip_prefix("agent-")?.strip_suffix(".jsonl")?;
    if id.is_empty() || id.starts_with("acompact") {
        return None;
    }
    Some(id)
}

/// The subagent transcripts of the session: `<session-id>/subagents/agent-<id>.jsonl`
/// (2.1.x) and `agent-<id>.jsonl` beside the main file whose `sessionId` is the session's
/// (2.0.x; that folder holds every session's files). Warm-up sidechains are left out.
pub(super) fn find_subagents(
    main: &Path,
    stem: &str,
    session_id: &str,
    budget: &mut u64,
    warnings: &mut Vec<String>,
) -> BTreeMap<String, SubFile> {
    let dir = main.parent().unwrap_or(Path::new("."));
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let mut candidates: Vec<(PathBuf, String)> = Vec::new();
    for folder in [dir.join(stem).join("subagents"), dir.to_path_buf()] {
        let Ok(listing) = std::fs::read_dir(&folder) else {
            continue;
        };
        let mut found: Vec<(PathBuf, String)> = listing
            .filter_map(Result::ok)
            .take(MAX_SUBAGENT_FILES)
            .filter_map(|entry| {
                let name = entry.file_name().into_string().ok()?;
                let id = agent_file_id(&name)?.to_string();
                entry
                    .file_type()
                    .ok()?
                    .is_file()
                    .then(|| (entry.path(), id))
            })
            .collect();
        found.sort();
        candidates.extend(found);
    }
    let mut subs = BTreeMap::new();
    for (path, id) in candidates {
        if subs.contains_key(&id) {
            continue;
        }
        // The 2.0.x folder holds every session's agent files: look at the first line's
        // `sessionId` before reading (and spending the byte budget on) a whole file.
        if peek_session_id(&path).is_some_and(|sid| sid != session_id) {
            continue;
        }
        let mut file_warnings = Vec::new();
        let conv = match read_conversation(&path, Strictness::Subagent, budget, &mut file_warnings)
        {
            Ok(conv) => conv,
            Err(error) => {
                warnings.push(format!(
                    "{error}; this subagent is replayed from its result only"
                ));
                continue;
            }
        };
        if conv
            .session_id
            .as_deref()
            .is_some_and(|sid| sid != session_id)
        {
            continue; // another session's subagent (2.0.x keeps them all in one folder)
        }
        if conv.warmup {
            continue; // 2.0.x warm-up sidechain, not a spawn
        }
        warnings.extend(file_warnings);
        subs.insert(
            id,
            SubFile {
                meta: read_meta(&path),
                path,
                conv,
                claimed: false,
            },
        );
    }
    subs
}

/// `agentType` and `description` of the `agent-<id>.meta.json` beside a subagent file
/// (read from at most 64 KiB; anything unreadable is no metadata).
pub(super) fn read_meta(path: &Path) -> Option<(Option<String>, Option<String>)> {
    use std::io::Read as _;
    let meta_path = path.with_extension("meta.json");
    let mut bytes = Vec::new();
    std::fs::File::open(meta_path)
        .ok()?
        .take(64 * 1024)
        .read_to_end(&mut bytes)
        .ok()?;
    let value: Value = serde_json::from_slice(&bytes).ok()?;
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_string);
    Some((text("agentType"), text("description")))
}

/// The `sessionId` of a file's first line, read from at most its first 64 KiB; `None` when
/// that line cannot tell (the whole file is then read and checked).
pub(super) fn peek_session_id(path: &Path) -> Option<String> {
    use std::io::Read as _;
    let mut head = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(64 * 1024)
        .read_to_end(&mut head)
        .ok()?;
    let text = String::from_utf8_lossy(&head);
    let first = text.lines().find(|line| !line.trim().is_empty())?;
    let value: Value = serde_json::Deserializer::from_str(first)
        .into_iter::<Value>()
        .next()?
        .ok()?;
    value.get("sessionId")?.as_str().map(str::to_string)
}

/// The session's version: the first `version` of the main file that is one (a value
/// that is not `major.minor.patch` is said and skipped); a warning names any later change
/// (a session resumed with another CLI) and a file without one.
pub(super) fn session_version(
    versions: &[(usize, String)],
    warnings: &mut Vec<String>,
) -> Option<Version> {
    let mut found: Option<(usize, Version)> = None;
    for (line, text) in versions {
        match text.parse::<Version>() {
            Ok(version) if found.is_none() => found = Some((*line, version)),
            Ok(version) => {
                if found.is_some_and(|(_, first)| first != version) {
                    warnings.push(format!(
                        "the session was resumed with another version ({version} at line \
                         {line}); the scenario uses {}",
                        found.map_or(String::new(), |(_, first)| first.to_string())
                    ));
                }
            }
            Err(_) => warnings.push(format!(
                "line {line}: `version` {} is not a version (major.minor.patch); ignored",
                quote(&one_line(text, 40))
            )),
        }
    }
    if found.is_none() {
        warnings.push(
            "the transcript names no version; the scenario runs under the simulator's default \
             (set session.version to the session's)"
                .to_string(),
        );
    }
    found.map(|(_, version)| version)
}

/// Reads one transcript file into its conversation, a line at a time.
pub(super) fn read_conversation(
    path: &Path,
    strictness: Strictness,
    budget: &mut u64,
    warnings: &mut Vec<String>,
) -> Result<Conversation, ImportError> {
    let mut collector = Collector::default();
    let mut skipped = Skipped::default();
    read_entries(
        path,
        strictness,
        budget,
        warnings,
        &mut skipped,
        &mut |line, raw| {
            collector.push(line, raw);
        },
    )?;
    let mut conv = collector.finish();
    conv.skipped = skipped.lines;
    conv.file = path.display().to_string();
    conv.skipped_count = skipped.count;
    Ok(conv)
}

impl Builder {
    /// Indexes the subagent files by task prompt and by `.meta.json` description, so that
    /// each Agent call finds its file in one look-up.
    pub(super) fn index_subs(&mut self) {
        for (id, sub) in &self.subs {
            for found in &sub.conv.notices {
                let file = sub.path.display().to_string();
                for key in [&found.agent_id, &found.tool_use_id].into_iter().flatten() {
                    self.stray_notices
                        .entry(key.clone())
                        .or_insert_with(|| (file.clone(), found.clone()));
                }
            }
            if let Some(key) = sub.conv.first_prompt {
                self.by_prompt.entry(key).or_default().push_back(id.clone());
            }
            if let Some((_, Some(description))) = &sub.meta {
                self.by_meta
                    .entry(description.clone())
                    .or_default()
                    .push_back(id.clone());
            }
        }
    }

    /// The subagent file of an Agent call: by the agent id of its result, else by its
    /// task prompt, else by the type and description of its `.meta.json`. Claimed files
    /// are dropped from the front of each queue as they are met, so every look-up is
    /// amortised constant time.
    pub(super) fn find_sub(
        &mut self,
        call: &ToolUse,
        agent_id: Option<&str>,
        agent_type: &str,
    ) -> Option<String> {
        let unclaimed = |subs: &BTreeMap<String, SubFile>, id: &str| {
            subs.get(id).is_some_and(|sub| !sub.claimed)
        };
        if let Some(id) = agent_id.filter(|id| unclaimed(&self.subs, id)) {
            return Some(id.to_string());
        }
        if let Some(queue) = call
            .text("prompt")
            .and_then(|p| self.by_prompt.get_mut(&prompt_key(p)))
        {
            while let Some(id) = queue.front() {
                if unclaimed(&self.subs, id) {
                    return Some(id.clone());
                }
                queue.pop_front();
            }
        }
        let queue = self.by_meta.get_mut(call.text("description")?)?;
        while queue.front().is_some_and(|id| !unclaimed(&self.subs, id)) {
            queue.pop_front();
        }
        let subs = &self.subs;
        queue
            .iter()
            .find(|id| {
                subs.get(id.as_str()).is_some_and(|sub| {
                    !sub.claimed
                        && sub.meta.as_ref().is_some_and(|(kind, _)| {
                            kind.as_deref().is_none_or(|kind| kind == agent_type)
                        })
                })
            })
            .cloned()
    }
}
