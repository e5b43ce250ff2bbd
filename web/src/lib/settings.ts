// The page's settings, kept in localStorage: the time zone times are shown in.
import type { Zone } from "./format";
import { requestRender } from "../store/scheduler";

const ZONE_KEY = "longhaul.timezone";

function stored(): Zone {
  try {
    return localStorage.getItem(ZONE_KEY) === "utc" ? "utc" : "local";
  } catch {
    return "local"; // storage refused (private mode): the default
  }
}

let zone: Zone = stored();

/** The time zone times are shown in ("local" unless set to "utc"). */
export function timeZone(): Zone {
  return zone;
}

/** Sets and keeps the time zone; the page re-renders. */
export function setTimeZone(z: Zone): void {
  zone = z;
  try {
    localStorage.setItem(ZONE_KEY, z);
  } catch {
    /* not kept: still used for this page */
  }
  requestRender();
}
