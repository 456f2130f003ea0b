// The environment of the helpers the install step runs on downloaded files
// (tar, and a goose_installer_url installer): what finds tools, writes to
// HOME, reaches the network through the workspace's proxy and trusts its
// certificate authorities. Never CODER_AGENT_TOKEN or any other CODER_*
// variable, the model provider's API keys, or BASH_ENV/ENV, which would make
// bash run a user's file.

const PASSED = new Set([
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "LANG",
  "TZ",
  "TMPDIR",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  // curl's and OpenSSL's CA bundle settings (curl(1) "ENVIRONMENT"; OpenSSL's openssl-env(7)).
  "CURL_CA_BUNDLE",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
]);

export function minimalEnv(env: NodeJS.ProcessEnv, settings: Record<string, string> = {}): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(env)) {
    if (value !== undefined && (PASSED.has(key) || key.startsWith("LC_"))) out[key] = value;
  }
  // curl reads http_proxy only in lower case (curl(1), ENVIRONMENT); the
  // module's own downloads read both cases, so an installer's curl does too.
  for (const name of ["http_proxy", "https_proxy", "no_proxy"]) {
    const upper = out[name.toUpperCase()];
    if (!out[name] && upper) out[name] = upper;
  }
  return { ...out, ...settings };
}
