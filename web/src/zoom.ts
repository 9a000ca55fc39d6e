// A magnifier for the pictures' small print: an element of class "zoom" (an Imperial Miners
// card, a Drillit! hex) is shown enlarged beside the pointer while the mouse is over it, or
// after a tap on a touch screen (until the next tap elsewhere). The lens is a copy of the
// whole picture looking at that element's box, so transforms and shared gradients hold.

/** the lens shows its piece this many times as large as the board does, at least */
const MAGNIFY = 2.5;
const MIN_WIDTH = 260;

export class Zoom {
  private svg: SVGSVGElement | undefined;
  private copy: SVGSVGElement | undefined;
  private shown: Element | undefined;
  private readonly lens: HTMLElement;

  constructor(board: HTMLElement) {
    this.lens = document.createElement("div");
    this.lens.id = "zoom-lens";
    this.lens.hidden = true;
    this.lens.setAttribute("aria-hidden", "true"); // the pieces' titles say the same
    document.body.append(this.lens);
    board.addEventListener("pointerover", (e) => {
      if (e.pointerType === "mouse") this.follow(e.target);
    });
    board.addEventListener("pointerleave", (e) => {
      if (e.pointerType === "mouse") this.hide();
    });
    document.addEventListener("pointerdown", (e) => {
      if (e.pointerType !== "mouse") this.follow(e.target);
    });
  }

  /** The picture now in the board (a new version replaces the lens's copy). */
  attach(svg: SVGSVGElement | undefined): void {
    this.hide();
    this.svg = svg;
    this.copy = undefined;
  }

  private follow(target: EventTarget | null): void {
    const piece = target instanceof Element && this.svg?.contains(target) ? target.closest(".zoom") : null;
    if (piece) this.show(piece);
    else this.hide();
  }

  private show(piece: Element): void {
    const svg = this.svg;
    const ctm = svg?.getScreenCTM();
    if (!svg || !ctm || piece === this.shown) return;
    if (!this.copy) {
      this.copy = svg.cloneNode(true) as SVGSVGElement;
      for (const e of Array.from(this.copy.querySelectorAll("[id]"))) e.removeAttribute("id");
      this.copy.removeAttribute("id");
      this.copy.removeAttribute("width");
      this.copy.removeAttribute("height");
      this.copy.removeAttribute("style"); // the board's minimum width is not the lens's
      this.lens.replaceChildren(this.copy);
    }
    const box = piece.getBoundingClientRect();
    const inverse = ctm.inverse();
    const a = new DOMPoint(box.left, box.top).matrixTransform(inverse);
    const b = new DOMPoint(box.right, box.bottom).matrixTransform(inverse);
    // A small piece (a hex) is shown with its neighbours around it, a card on its own.
    const pad = box.width < 60 ? (b.x - a.x) * 0.6 : 4 / ctm.a;
    this.copy.setAttribute("viewBox", `${a.x - pad} ${a.y - pad} ${b.x - a.x + 2 * pad} ${b.y - a.y + 2 * pad}`);
    const width = Math.min(Math.max(box.width * MAGNIFY, MIN_WIDTH), window.innerWidth - 16);
    const height = (width * (b.y - a.y + 2 * pad)) / (b.x - a.x + 2 * pad);
    this.lens.style.width = `${width}px`;
    this.lens.style.height = `${height}px`;
    // Beside the piece (right, else left, else below), never over the pointer's piece.
    let left = box.right + 12;
    if (left + width > window.innerWidth - 8) left = box.left - 12 - width;
    let top = Math.min(Math.max(box.top, 8), window.innerHeight - height - 8);
    if (left < 8) {
      left = Math.max(8, Math.min(box.left, window.innerWidth - width - 8));
      top = box.bottom + 12 + height > window.innerHeight ? box.top - 12 - height : box.bottom + 12;
    }
    this.lens.style.left = `${left}px`;
    this.lens.style.top = `${Math.max(top, 8)}px`;
    this.lens.hidden = false;
    this.shown = piece;
  }

  private hide(): void {
    this.lens.hidden = true;
    this.shown = undefined;
  }
}
