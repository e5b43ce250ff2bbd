// Page keys: `/` focuses the page's search or filter box (the first visible element marked
// data-search), unless the user is typing in a field; Escape leaves a field.
import { useEffect } from "preact/hooks";

/** Whether a key press in `el` is typing (a text field, a select, editable content). */
export function isTyping(el: Element | null): boolean {
  if (!el) return false;
  const tag = el.tagName;
  if (tag === "INPUT") {
    return !["checkbox", "radio", "button", "submit", "reset"].includes((el as HTMLInputElement).type);
  }
  return tag === "TEXTAREA" || tag === "SELECT" ||
    (el as HTMLElement).isContentEditable === true;
}

function onPageKey(e: KeyboardEvent): void {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const active = document.activeElement;
  if (e.key === "Escape" && isTyping(active)) {
    (active as HTMLElement).blur();
    return;
  }
  if (e.key !== "/" || isTyping(active)) return;
  const box = [...document.querySelectorAll<HTMLElement>("[data-search]")]
    .find((el) => el.offsetParent !== null);
  if (!box) return;
  e.preventDefault(); // the `/` is not typed into the box
  box.focus();
  if (box instanceof HTMLInputElement) box.select();
}

export function useSlashKey(): void {
  useEffect(() => {
    document.addEventListener("keydown", onPageKey);
    return () => document.removeEventListener("keydown", onPageKey);
  }, []);
}
