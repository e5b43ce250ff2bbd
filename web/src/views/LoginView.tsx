// Shown when longhauld runs with tokens and the browser has none yet: the token is sent once
// and kept by the server as an HttpOnly cookie (the page never stores it).
import { useState } from "preact/hooks";
import { login } from "../api/client";

export function LoginView() {
  const [token, setToken] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError("");
    try {
      await login(token.trim());
      location.reload();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="card" data-testid="login">
      <h2>Sign in</h2>
      <p>This longhauld asks for a token (<code>longhaul token new ROLE NAME</code> makes one).</p>
      <form onSubmit={submit}>
        <input type="password" autocomplete="off" placeholder="token" value={token}
          onInput={(e) => setToken((e.target as HTMLInputElement).value)} />{" "}
        <button type="submit" disabled={busy || token.trim() === ""}>Sign in</button>
      </form>
      {error && <p class="error">{error}</p>}
    </div>
  );
}
