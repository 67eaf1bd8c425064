//! The run's progress bars on stderr: one for the deposits, one (with `--wait`) for the processing.
//! indicatif draws nothing when stderr is not a terminal; the notes that matter are printed
//! anyway.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::time::Duration;

pub struct Progress {
    bars: MultiProgress,
    deposits: ProgressBar,
    processing: Option<ProgressBar>,
}

fn style() -> ProgressStyle {
    ProgressStyle::with_template("{prefix:>10} [{bar:40}] {pos}/{len} {elapsed_precise} {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ")
}

impl Progress {
    /// The deposit bar, `done` of `total` files already settled by an earlier run.
    pub fn new(total: usize, done: usize) -> Progress {
        let bars = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
        let deposits = bars.add(ProgressBar::new(total as u64));
        deposits.set_style(style());
        deposits.set_prefix("deposited");
        deposits.set_position(done as u64);
        deposits.enable_steady_tick(Duration::from_millis(250));
        Progress {
            bars,
            deposits,
            processing: None,
        }
    }

    /// One more file settled (deposited or refused).
    pub fn deposited(&self) {
        self.deposits.inc(1);
    }

    /// What the deposits wait for, shown beside the bar; empty to clear it.
    pub fn waiting(&self, why: &str) {
        self.deposits.set_message(why.to_owned());
    }

    pub fn deposits_done(&self) {
        self.deposits.set_message("");
        self.deposits.finish();
    }

    /// The processing bar: `done` of `total` documents out of pending and processing.
    pub fn processing(&mut self, done: usize, total: usize) {
        let bar = self.processing.get_or_insert_with(|| {
            let bar = self.bars.add(ProgressBar::new(total as u64));
            bar.set_style(style());
            bar.set_prefix("processed");
            bar.enable_steady_tick(Duration::from_millis(250));
            bar
        });
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.processing {
            bar.finish();
        }
        self.deposits.finish();
    }

    /// A line on stderr above the bars, shown whether or not they are.
    pub fn note(&self, line: &str) {
        self.bars.suspend(|| eprintln!("{line}"));
    }
}
