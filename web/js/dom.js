// Building and finding the page's elements. Every module that draws imports el and $ from here.
// Every string that came from a learner or the judge is placed with textContent (el's children),
// never as HTML; the one HTML the page inserts is the lesson (stages.js).

export const $ = (selector) => document.querySelector(selector);

// el("a", { class: "line", onclick: f }, "line 3"): attributes, "on..." listeners, and children
// (nodes, or anything else as text; null and undefined are skipped).
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}
