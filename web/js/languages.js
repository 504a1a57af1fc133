// What the page knows about the languages a kernel can be written in, and which one a stage opens
// in. A stage offers the languages it has a starter in (stage.languages); the server names them.
// What we know without the server: the order of the switch, short tags for the history and the
// leaderboard, the editor mode, and the names of languages a stage no longer offers (an old job in
// the history). Used by every module that shows a language; pure but for the remembered choice.

import { el } from "./dom.js";
import { state } from "./state.js";

const LANGUAGE_ORDER = ["cuda", "python", "rust"];
const KNOWN_LANGUAGES = {
  cuda: { name: "CUDA C++", tag: "cu", editor_mode: "text/x-c++src" },
  python: { name: "Python (Numba)", tag: "py", editor_mode: "python" },
  rust: { name: "Rust (nvptx64)", tag: "rs", editor_mode: "rust" },
};

// The languages of a stage; a server without the field offers CUDA only.
export function stageLanguages(stage) {
  if (stage.languages && Object.keys(stage.languages).length) return stage.languages;
  return { cuda: { ...KNOWN_LANGUAGES.cuda, signature: stage.signature, starter: stage.starter, extension: ".cu" } };
}

export function languageIds(stage) {
  const ids = Object.keys(stageLanguages(stage));
  const rank = (id) => (LANGUAGE_ORDER.includes(id) ? LANGUAGE_ORDER.indexOf(id) : LANGUAGE_ORDER.length);
  return ids.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

// The open stage's entry for the language in the editor.
export function currentLanguage() {
  return stageLanguages(state.stage)[state.language];
}

export function languageName(id) {
  const offered = state.stage && stageLanguages(state.stage)[id];
  return (offered && offered.name) || (KNOWN_LANGUAGES[id] && KNOWN_LANGUAGES[id].name) || id;
}

// "cu", "py", "rs": from the table above, else from the file extension the server names.
function languageTag(id) {
  if (KNOWN_LANGUAGES[id]) return KNOWN_LANGUAGES[id].tag;
  const offered = state.stage && stageLanguages(state.stage)[id];
  return offered && offered.extension ? offered.extension.replace(/^\./, "") : id;
}

export function languageBadge(id) {
  return el("abbr", { class: `lang-tag lang-${id}`, "data-language": id, title: languageName(id) }, languageTag(id));
}

// CodeMirror's mode for a language: the server's, else ours, else none (plain text).
export function editorMode(id, info) {
  return info.editor_mode || (KNOWN_LANGUAGES[id] || {}).editor_mode || null;
}

// localStorage: the language last chosen per stage, and anywhere.
const stageLanguageKey = (stageId) => `cudojo.language.${stageId}`;
const LAST_LANGUAGE_KEY = "cudojo.language";

export function rememberLanguage(stageId, language) {
  localStorage.setItem(stageLanguageKey(stageId), language);
  localStorage.setItem(LAST_LANGUAGE_KEY, language);
}

// The language a stage opens in: the one last chosen there, else the last chosen anywhere, else CUDA.
export function defaultLanguage(stage) {
  const offered = languageIds(stage);
  for (const wanted of [localStorage.getItem(stageLanguageKey(stage.id)), localStorage.getItem(LAST_LANGUAGE_KEY), "cuda"]) {
    if (wanted && offered.includes(wanted)) return wanted;
  }
  return offered[0];
}
