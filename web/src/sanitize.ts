// The board's SVG, parsed (never assigned as HTML) and cleaned before it joins the page:
// only drawing elements and presentation attributes stay, so nothing in it can run, load
// or navigate, whoever wrote it. Kept inline (not as an <img>) so that the <title> of each
// piece is shown on hover and read by screen readers. Ids get a prefix so they can never
// collide with the page's own.
const SVG_NS = "http://www.w3.org/2000/svg";
const TAGS = new Set([
  "svg", "g", "defs", "symbol", "use", "title", "desc", "rect", "circle", "ellipse", "line",
  "polyline", "polygon", "path", "text", "tspan", "linearGradient", "radialGradient", "stop",
  "clipPath", "mask", "pattern", "marker",
]);
const NAME = /^(?:[a-z][a-z0-9-]*|xml:space|xlink:href)$/i;
const LOCAL_URL = /^url\(#[\w-]+\)$/;

function safe(name: string, value: string): boolean {
  const lower = name.toLowerCase();
  if (!NAME.test(name) || lower.startsWith("on") || lower === "style") return false;
  if (lower === "href" || lower === "xlink:href") return value.startsWith("#");
  if (/url\s*\(/i.test(value) && !LOCAL_URL.test(value.trim())) return false;
  return !/javascript:|data:/i.test(value);
}

function clean(element: Element, prefix: string): void {
  for (const child of Array.from(element.children)) {
    if (child.namespaceURI !== SVG_NS || !TAGS.has(child.localName)) child.remove();
    else clean(child, prefix);
  }
  for (const attribute of Array.from(element.attributes)) {
    const { name, value } = attribute;
    if (!safe(name, value)) element.removeAttribute(name);
    else if (name === "id") element.setAttribute(name, prefix + value);
    else if (name === "href" || name === "xlink:href") attribute.value = `#${prefix}${value.slice(1)}`;
    else if (value.includes("url(#")) element.setAttribute(name, value.replace(/url\(#/g, `url(#${prefix}`));
  }
}

/** The cleaned <svg> element, ready to insert; null when the text is no SVG document. */
export function sanitizeSvg(source: string, prefix: string): SVGSVGElement | null {
  const parsed = new DOMParser().parseFromString(source, "image/svg+xml");
  const root = parsed.documentElement;
  if (root.namespaceURI !== SVG_NS || root.localName !== "svg") return null;
  if (parsed.getElementsByTagName("parsererror").length > 0) return null;
  clean(root, prefix);
  return document.importNode(root, true) as unknown as SVGSVGElement;
}
