// The connection state shown in the header: whether the page is in touch with longhauld.
// Fed by every API request and by the live stream (watch.ts).
import { requestRender } from "../store/scheduler";

export type ConnState = "connecting" | "live" | "disconnected";

let requestsOk = true;
let streamState: ConnState | null = null; // null: no live stream on this page

/** Records the outcome of one HTTP request (reached the server or not). */
export function noteRequest(ok: boolean): void {
  if (ok !== requestsOk) {
    requestsOk = ok;
    requestRender();
  }
}

/** Records the live stream's state; null when the page has no stream open. */
export function noteStream(s: ConnState | null): void {
  if (s !== streamState) {
    streamState = s;
    requestRender();
  }
}

export function connectionState(): ConnState {
  if (streamState) return streamState;
  return requestsOk ? "live" : "disconnected";
}

export function hasStream(): boolean {
  return streamState !== null;
}

let loginNeeded = false;

/** Records that longhauld asked for a token (401): the page shows the sign-in form. */
export function noteUnauthenticated(needed: boolean): void {
  if (needed !== loginNeeded) {
    loginNeeded = needed;
    requestRender();
  }
}

export function needsLogin(): boolean {
  return loginNeeded;
}
