//! A private directory tree for the scoped-capability tests of the `engine` and `reliability`
//! groups (`#[path = "../support/scoped_tree.rs"] mod scoped_tree;`): `in/ok.txt`,
//! `out/secret.txt`, a symlink `in/link.txt` to the secret and a symlinked directory
//! `in/door` to `out`. Removed on drop.

pub(crate) struct Tree(std::path::PathBuf);

impl Tree {
    pub(crate) fn new(tag: &str) -> Tree {
        let root = std::env::temp_dir().join(format!("bt-scoped-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("in")).unwrap();
        std::fs::create_dir_all(root.join("out")).unwrap();
        std::fs::write(root.join("in/ok.txt"), "fine").unwrap();
        std::fs::write(root.join("out/secret.txt"), "secret").unwrap();
        std::os::unix::fs::symlink(root.join("out/secret.txt"), root.join("in/link.txt")).unwrap();
        std::os::unix::fs::symlink(root.join("out"), root.join("in/door")).unwrap();
        Tree(root)
    }

    /// The absolute path of `rel` inside the tree.
    pub(crate) fn path(&self, rel: &str) -> String {
        self.0.join(rel).display().to_string()
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
