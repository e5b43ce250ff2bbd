import { describe, expect, it } from "vitest";
import { isTyping } from "./keys";

const el = (tag: string, extra: Record<string, unknown> = {}) => ({ tagName: tag, ...extra }) as unknown as Element;

describe("isTyping", () => {
  it("is a text field, a select or editable content, not a checkbox or a button", () => {
    expect(isTyping(el("INPUT", { type: "search" }))).toBe(true);
    expect(isTyping(el("INPUT", { type: "text" }))).toBe(true);
    expect(isTyping(el("TEXTAREA"))).toBe(true);
    expect(isTyping(el("SELECT"))).toBe(true);
    expect(isTyping(el("DIV", { isContentEditable: true }))).toBe(true);
    expect(isTyping(el("INPUT", { type: "checkbox" }))).toBe(false);
    expect(isTyping(el("BUTTON"))).toBe(false);
    expect(isTyping(el("BODY"))).toBe(false);
    expect(isTyping(null)).toBe(false);
  });
});
