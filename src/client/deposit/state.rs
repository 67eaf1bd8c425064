//! The state file of a deposit run: JSON lines, append-only, each written whole as soon as what it
//! records happened, so a run killed at any point resumes where it stopped. The first line names
//! the run (its id, the category, the files); each other line is one event. A last line cut short
//! by a kill is dropped; anything the file does not record is posted again under the same
//! idempotency key, and the service replays its first answer.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{Read as _, Write as _};
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

/// The name of the state file in the folder, when `--state` does not choose one.
pub const DEFAULT_NAME: &str = ".sceau-deposit.jsonl";

/// Why the state file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("cannot use the state file {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("the state file {path} belongs to another run ({why}); delete it to start a new run on this folder")]
    Mismatch { path: PathBuf, why: String },
    #[error("another run is using the state file {path}: wait for it to end")]
    InUse { path: PathBuf },
    #[error("the state file {path} is damaged at line {line} ({why}); delete it to start a new run on this folder")]
    Damaged { path: PathBuf, line: usize, why: String },
}

/// The first line: which run this file belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunHeader {
    /// Chosen on the first run (uuid v4); every idempotency key of the run starts with it.
    pub run: String,
    pub category: String,
    /// The folder's files, in deposit order; a file's index in it is its index in the keys.
    pub files: Vec<String>,
}

/// One thing that happened, a line each.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// Batch `k` (from 0) was opened as `id`; its files start at index `first`.
    BatchCreated { k: usize, id: String, first: usize },
    /// File `index` is item `item` of batch `k`.
    Deposited { index: usize, k: usize, item: String },
    /// File `index` was refused, by the service or before sending, with this error code.
    Refused { index: usize, code: String },
    /// Batch `k` was submitted (or found closed on resume): no more deposits go to it.
    Submitted { k: usize },
    /// Batch `k` was canceled, left empty when the files meant for it were all refused.
    Canceled { k: usize },
}

/// The steps of a run that POST, each under an idempotency key of its own.
#[derive(Debug, Clone, Copy)]
pub enum Key {
    /// Opening batch k.
    Batch(usize),
    /// Depositing file `index` (whichever batch it goes to).
    Doc(usize),
    /// Submitting batch k.
    Submit(usize),
    /// Canceling batch k.
    Cancel(usize),
}

/// What a file became.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Deposited { k: usize, item: String },
    Refused { code: String },
}

/// A batch of the run, as the state file knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchState {
    pub id: String,
    pub first: usize,
    pub deposited: usize,
    pub closed: bool,
}

/// The run as recorded, with the file it is recorded in, open for appending.
#[derive(Debug)]
pub struct State {
    path: PathBuf,
    file: File,
    pub header: RunHeader,
    pub batches: Vec<BatchState>,
    pub outcomes: BTreeMap<usize, Outcome>,
    /// Whether this run started from an existing file.
    pub resumed: bool,
}

impl State {
    /// Opens the state at `path` for a run of `category` over `files`: resumed when the file is
    /// there and belongs to the same run, started afresh when it is not there, refused otherwise.
    pub fn open(path: &Path, category: &str, files: &[String]) -> Result<State, StateError> {
        let io = |source| StateError::Io {
            path: path.to_owned(),
            source,
        };
        // Never through a link: one planted in the folder would have the run write where it points.
        let mut file = common::private_fs::no_follow(OpenOptions::new().read(true).append(true).create(true).mode(0o600))
            .open(path)
            .map_err(io)?;
        // 0600 whatever the file was made with: it names the folder's files and the run's keys.
        file.set_permissions(std::fs::Permissions::from_mode(0o600)).map_err(io)?;
        // One run at a time on a state: a second would post the same steps beside the first.
        // The lock goes with the process, so a killed run leaves none behind.
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => return Err(StateError::InUse { path: path.to_owned() }),
            Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
        }
        let mut text = String::new();
        file.read_to_string(&mut text).map_err(io)?;
        // Lines end with '\n'; whatever follows the last one was cut short by a kill.
        let whole = text.rfind('\n').map_or(0, |end| end + 1);
        if whole < text.len() {
            file.set_len(whole as u64).map_err(io)?;
        }
        let mut lines = text[..whole].lines();
        let Some(first) = lines.next() else {
            return Self::start(path.to_owned(), file, category, files);
        };
        let damaged = |line: usize, why: String| StateError::Damaged {
            path: path.to_owned(),
            line,
            why,
        };
        let header: RunHeader = serde_json::from_str(first).map_err(|e| damaged(1, e.to_string()))?;
        let mismatch = |why: String| StateError::Mismatch {
            path: path.to_owned(),
            why,
        };
        if header.category != category {
            return Err(mismatch(format!("category {}, not {category}", header.category)));
        }
        if header.files != files {
            let first_difference = header
                .files
                .iter()
                .zip(files)
                .position(|(a, b)| a != b)
                .map_or_else(String::new, |i| format!(", first difference at {:?}", files[i]));
            return Err(mismatch(format!(
                "made for {} files, the folder has {}{first_difference}",
                header.files.len(),
                files.len()
            )));
        }
        let mut state = State {
            path: path.to_owned(),
            file,
            header,
            batches: Vec::new(),
            outcomes: BTreeMap::new(),
            resumed: true,
        };
        for (n, line) in lines.enumerate() {
            let event: Event = serde_json::from_str(line).map_err(|e| damaged(n + 2, e.to_string()))?;
            state.apply(&event).map_err(|why| damaged(n + 2, why))?;
        }
        Ok(state)
    }

    /// A new run: a fresh id, the header written.
    fn start(path: PathBuf, file: File, category: &str, files: &[String]) -> Result<State, StateError> {
        let header = RunHeader {
            run: uuid::Uuid::new_v4().to_string(),
            category: category.to_owned(),
            files: files.to_vec(),
        };
        let mut state = State {
            path,
            file,
            header: header.clone(),
            batches: Vec::new(),
            outcomes: BTreeMap::new(),
            resumed: false,
        };
        state.write(&header)?;
        Ok(state)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records `event`: applied, then written whole.
    pub fn record(&mut self, event: Event) -> Result<(), StateError> {
        // Checked first, so the file never holds an event its reader would refuse.
        self.apply(&event).map_err(|why| StateError::Damaged {
            path: self.path.clone(),
            line: 0,
            why,
        })?;
        self.write(&event)
    }

    /// One line in one write: a kill leaves it whole or cut short, never interleaved. The file is
    /// unbuffered, so the line is the kernel's once this returns, which is what a killed client
    /// needs (a power cut may lose the last lines: they are posted again, and replayed).
    fn write<T: Serialize>(&mut self, value: &T) -> Result<(), StateError> {
        let mut line = serde_json::to_vec(value).map_err(|e| StateError::Io {
            path: self.path.clone(),
            source: e.into(),
        })?;
        line.push(b'\n');
        self.file.write_all(&line).map_err(|source| StateError::Io {
            path: self.path.clone(),
            source,
        })
    }

    fn apply(&mut self, event: &Event) -> Result<(), String> {
        match event {
            Event::BatchCreated { k, id, first } => {
                if *k != self.batches.len() {
                    return Err(format!("batch {k} created out of order"));
                }
                self.batches.push(BatchState {
                    id: id.clone(),
                    first: *first,
                    deposited: 0,
                    closed: false,
                });
            }
            Event::Deposited { index, k, item } => {
                self.check_index(*index)?;
                let batch = self.batches.get_mut(*k).ok_or(format!("deposit in unknown batch {k}"))?;
                batch.deposited += 1;
                self.outcomes.insert(*index, Outcome::Deposited { k: *k, item: item.clone() });
            }
            Event::Refused { index, code } => {
                self.check_index(*index)?;
                self.outcomes.insert(*index, Outcome::Refused { code: code.clone() });
            }
            Event::Submitted { k } | Event::Canceled { k } => {
                self.batches.get_mut(*k).ok_or(format!("unknown batch {k}"))?.closed = true;
            }
        }
        Ok(())
    }

    fn check_index(&self, index: usize) -> Result<(), String> {
        if index >= self.header.files.len() {
            return Err(format!("file index {index} out of range"));
        }
        Ok(())
    }

    /// The first file with no outcome yet: where depositing goes on.
    pub fn next_index(&self) -> usize {
        (0..self.header.files.len())
            .find(|i| !self.outcomes.contains_key(i))
            .unwrap_or(self.header.files.len())
    }

    /// The batch being filled, if one is open: (k, its state).
    pub fn open_batch(&self) -> Option<(usize, &BatchState)> {
        self.batches.iter().enumerate().rev().find(|(_, b)| !b.closed)
    }

    /// How many files have an outcome.
    pub fn settled(&self) -> usize {
        self.outcomes.len()
    }

    /// The idempotency key of a step of this run: the same on every run that resumes it.
    pub fn key(&self, step: Key) -> String {
        let run = &self.header.run;
        match step {
            Key::Batch(k) => format!("{run}:batch:{k}"),
            Key::Doc(index) => format!("{run}:doc:{index}"),
            Key::Submit(k) => format!("{run}:submit:{k}"),
            Key::Cancel(k) => format!("{run}:cancel:{k}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Dir(PathBuf);

    impl Dir {
        fn new() -> Dir {
            let path = std::env::temp_dir().join(format!("sceau-state-{}", uuid::Uuid::new_v4()));
            std::fs::create_dir_all(&path).unwrap();
            Dir(path)
        }
        fn state(&self) -> PathBuf {
            self.0.join(DEFAULT_NAME)
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn created(k: usize, id: &str, first: usize) -> Event {
        Event::BatchCreated { k, id: id.into(), first }
    }

    fn deposited(index: usize, k: usize, item: &str) -> Event {
        Event::Deposited {
            index,
            k,
            item: item.into(),
        }
    }

    fn files(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("doc-{i:03}.png")).collect()
    }

    #[test]
    fn a_run_resumes_with_its_id_batches_and_outcomes() {
        let dir = Dir::new();
        let mut state = State::open(&dir.state(), "identite", &files(3)).unwrap();
        assert!(!state.resumed);
        let run = state.header.run.clone();
        state.record(created(0, "BAT-1", 0)).unwrap();
        state.record(deposited(0, 0, "BTI-a")).unwrap();
        state
            .record(Event::Refused {
                index: 1,
                code: "invalid_document".into(),
            })
            .unwrap();
        drop(state);

        let state = State::open(&dir.state(), "identite", &files(3)).unwrap();
        assert!(state.resumed);
        assert_eq!(state.header.run, run);
        assert_eq!(state.next_index(), 2);
        assert_eq!(state.settled(), 2);
        let (k, batch) = state.open_batch().unwrap();
        assert_eq!((k, batch.id.as_str(), batch.deposited), (0, "BAT-1", 1));
        assert_eq!(
            state.outcomes[&1],
            Outcome::Refused {
                code: "invalid_document".into()
            }
        );
        assert_eq!(state.key(Key::Doc(2)), format!("{run}:doc:2"));
        let mode = std::fs::metadata(dir.state()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn a_last_line_cut_short_is_dropped_and_the_file_goes_on_cleanly() {
        let dir = Dir::new();
        let mut state = State::open(&dir.state(), "identite", &files(3)).unwrap();
        state.record(created(0, "BAT-1", 0)).unwrap();
        state.record(deposited(0, 0, "BTI-a")).unwrap();
        drop(state);
        // Killed in the middle of the next line.
        let mut file = OpenOptions::new().append(true).open(dir.state()).unwrap();
        file.write_all(br#"{"event":"deposited","index":1,"k":0,"it"#).unwrap();
        drop(file);

        let mut state = State::open(&dir.state(), "identite", &files(3)).unwrap();
        assert_eq!(state.next_index(), 1, "the cut line records nothing");
        state.record(deposited(1, 0, "BTI-b")).unwrap();
        drop(state);
        let state = State::open(&dir.state(), "identite", &files(3)).unwrap();
        assert_eq!(state.next_index(), 2);
        assert_eq!(state.batches[0].deposited, 2);
    }

    #[test]
    fn a_state_file_that_is_a_link_is_refused_not_followed() {
        let dir = Dir::new();
        let elsewhere = dir.0.join("elsewhere.txt");
        std::fs::write(&elsewhere, b"not a state\n").unwrap();
        std::os::unix::fs::symlink(&elsewhere, dir.state()).unwrap();
        assert!(State::open(&dir.state(), "identite", &files(3)).is_err());
        assert_eq!(
            std::fs::read(&elsewhere).unwrap(),
            b"not a state\n",
            "the link's target is untouched"
        );
    }

    #[test]
    fn a_state_of_another_category_or_other_files_is_refused_naming_the_file() {
        let dir = Dir::new();
        State::open(&dir.state(), "identite", &files(3)).unwrap();
        let other = State::open(&dir.state(), "administratif", &files(3)).unwrap_err();
        assert!(matches!(other, StateError::Mismatch { .. }));
        let message = other.to_string();
        assert!(message.contains(&dir.state().display().to_string()), "{message}");
        assert!(message.contains("delete it"), "{message}");

        let mut renamed = files(3);
        renamed[1] = "other.png".into();
        let message = State::open(&dir.state(), "identite", &renamed).unwrap_err().to_string();
        assert!(message.contains("\"other.png\""), "{message}");
        let message = State::open(&dir.state(), "identite", &files(4)).unwrap_err().to_string();
        assert!(message.contains("made for 3 files, the folder has 4"), "{message}");
    }

    #[test]
    fn a_damaged_line_in_the_middle_is_an_error_not_a_silent_restart() {
        let dir = Dir::new();
        let mut state = State::open(&dir.state(), "identite", &files(3)).unwrap();
        state.record(created(0, "BAT-1", 0)).unwrap();
        drop(state);
        let mut file = OpenOptions::new().append(true).open(dir.state()).unwrap();
        file.write_all(b"not json\n{\"event\":\"submitted\",\"k\":0}\n").unwrap();
        drop(file);
        let error = State::open(&dir.state(), "identite", &files(3)).unwrap_err();
        assert!(matches!(error, StateError::Damaged { line: 3, .. }), "{error}");
    }

    #[test]
    fn the_state_file_is_the_owners_alone_even_when_it_was_made_readable() {
        let dir = Dir::new();
        drop(State::open(&dir.state(), "identite", &files(3)).unwrap());
        std::fs::set_permissions(dir.state(), std::fs::Permissions::from_mode(0o644)).unwrap();
        drop(State::open(&dir.state(), "identite", &files(3)).unwrap());
        let mode = std::fs::metadata(dir.state()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn one_run_at_a_time_holds_the_state() {
        let dir = Dir::new();
        let first = State::open(&dir.state(), "identite", &files(3)).unwrap();
        let second = State::open(&dir.state(), "identite", &files(3)).unwrap_err();
        assert!(matches!(second, StateError::InUse { .. }), "{second}");
        drop(first);
        assert!(State::open(&dir.state(), "identite", &files(3)).unwrap().resumed);
    }

    #[test]
    fn a_closed_batch_is_not_the_open_one() {
        let dir = Dir::new();
        let mut state = State::open(&dir.state(), "identite", &files(3)).unwrap();
        state.record(created(0, "BAT-1", 0)).unwrap();
        state.record(deposited(0, 0, "BTI-a")).unwrap();
        state.record(Event::Submitted { k: 0 }).unwrap();
        assert!(state.open_batch().is_none());
        state.record(created(1, "BAT-2", 1)).unwrap();
        assert_eq!(state.open_batch().map(|(k, _)| k), Some(1));
        assert!(state.record(created(5, "BAT-9", 2)).is_err());
    }
}
