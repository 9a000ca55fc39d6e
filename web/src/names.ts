// Names people chose (seat names, display names) shown beside other text: each is isolated
// for bidirectional text, so a name in a right-to-left script, or one that ends in a
// number, never reorders the words around it (a seat named "evil" + U+202E could otherwise
// make "Join as live" read as a different seat). The gateway refuses bidirectional
// controls in names; isolating them is the page's half of the guard.

const FSI = "\u2068"; // FIRST STRONG ISOLATE
const PDI = "\u2069"; // POP DIRECTIONAL ISOLATE

/** The name isolated for plain text (a button's label, a line of text). */
export function isolate(name: string): string {
  return `${FSI}${name}${PDI}`;
}

/** The name as a <bdi> element, for text built of elements. */
export function bdi(name: string): HTMLElement {
  const element = document.createElement("bdi");
  element.textContent = name;
  return element;
}
