//! `bt completions SHELL`: prints a completion script generated from the clap definition in
//! `src/cli.rs` (so new subcommands and flags complete without further edits).
//!
//! bash: `bt completions bash > ~/.local/share/bash-completion/completions/bt`;
//! zsh: `bt completions zsh > ~/.zfunc/_bt`; fish: `bt completions fish > ~/.config/fish/completions/bt.fish`.

use clap::CommandFactory;

/// `bt completions` arguments.
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct CompletionArgs {
    /// The shell to generate for
    #[arg(value_enum)]
    pub(crate) shell: clap_complete::Shell,
}

/// Writes the script to standard output.
pub(crate) fn main(a: CompletionArgs) -> i32 {
    let mut cmd = crate::cli::Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "bt", &mut script);
    crate::cli::emit(&String::from_utf8_lossy(&script))
}
