// Starts `bt lsp` for .bt and .btscript files.
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const command = vscode.workspace.getConfiguration("bt").get("path") || "bt";
  client = new LanguageClient(
    "bt",
    "bt language server",
    { command, args: ["lsp"] },
    { documentSelector: [{ scheme: "file", language: "bt" }] }
  );
  client.start();
  context.subscriptions.push(client);
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
