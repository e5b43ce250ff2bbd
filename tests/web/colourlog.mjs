// A training log as a colourful stage writes it: SGR colours (basic, bright, 256-colour,
// truecolor, bold, dim), an OSC window title, cursor moves and \r progress redraws. Used by
// the browser test's log cases and bench/web/log_view.mjs. Every `needleEvery` lines a
// "WARN needle" line; their byte offsets come back with the bytes.

const E = "\x1b";

/** One training line, plain text as it should be shown and raw bytes as written. */
export function trainingLine(i) {
  const loss = (2 / (1 + i / 1000)).toFixed(4);
  const raw = `${E}[2m2026-12-05T01:${String(Math.floor(i / 60) % 60).padStart(2, "0")}:${String(i % 60).padStart(2, "0")}Z${E}[0m ` +
    `${E}[32mINFO${E}[0m step ${i} loss ${E}[1;33m${loss}${E}[0m lr ${E}[38;5;141m3.0e-04${E}[0m ` +
    `tok/s ${E}[38;2;255;128;0m${41000 + (i % 997)}${E}[0m\n`;
  return raw;
}

/**
 * The log of `lines` training lines (about 130 bytes each), with a title and a redrawn eval
 * progress line every 1,000 lines and a needle every `needleEvery` lines (0: none).
 * Returns { bytes: Buffer, needles: [byte offsets], lineOffsets: (i) => offset of line i }.
 */
export function colourfulLog(lines, needleEvery = 0) {
  const parts = [];
  const needles = [];
  const offsets = [];
  let size = 0;
  const add = (s) => {
    const b = Buffer.from(s, "utf8");
    parts.push(b);
    size += b.length;
  };
  for (let i = 0; i < lines; i++) {
    offsets.push(size);
    add(trainingLine(i));
    if (needleEvery && i % needleEvery === needleEvery - 1) {
      needles.push(size);
      add(`${E}[1;31mWARN${E}[0m needle ${needles.length} at step ${i}\n`);
    }
    if (i % 1000 === 999) {
      add(`${E}]0;train step ${i + 1}${E}\\` + `${E}[2K${E}[1Geval 10%\r${E}[2K${E}[1Geval 60%\r${E}[2K${E}[1Geval 100% done\n`);
    }
  }
  return { bytes: Buffer.concat(parts), needles, lineOffsets: (i) => offsets[i] };
}
