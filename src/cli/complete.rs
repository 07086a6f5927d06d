//! `bt completions SHELL`: prints a completion script generated from the clap definition in
//! `src/cli.rs` (so new subcommands and flags complete without further edits).
//!
//! bash: `bt completions bash > ~/.local/share/bash-completion/completions/bt`;
//! zsh: `bt completions zsh > ~/.zfunc/_bt`; fish: `bt completions fish > ~/.config/fish/completions/bt.fish`.

/// `bt completions` arguments.
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct CompletionArgs {
    /// The shell to generate for
    #[arg(value_enum)]
    pub(crate) shell: clap_complete::Shell,
}

/// Writes the script for `cmd` (the whole `bt` command line) to standard output.
pub(crate) fn main(a: CompletionArgs, mut cmd: clap::Command) -> i32 {
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "bt", &mut script);
    crate::cli::common::emit(&String::from_utf8_lossy(&script))
}
