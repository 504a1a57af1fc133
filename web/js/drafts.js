// The learner's drafts: one text per stage and language, whatever the editor held last. Every
// read and write of a draft goes through the functions here (stages.js opens a stage's drafts,
// source.js keeps one on each edit, history.js reads one before replacing it, account.js names
// their owner), so moving drafts to the server changes this file only: openDrafts would fetch a
// stage's drafts (it is async for that), readDraft answer from what it fetched, and keepDraft send
// the text in the background.
//
// Today they live in localStorage: cudojo.draft.STAGE.LANGUAGE holds a draft, and
// cudojo.drafts-owner the id of the learner they belong to. A draft equal to the starter is not
// kept, so a stage whose starter changes on the server shows the new one.

const OWNER_KEY = "cudojo.drafts-owner";
const draftKey = (stageId, language) => `cudojo.draft.${stageId}.${language}`;
// Drafts from before languages existed, one per stage; they become the CUDA drafts.
const oldDraftKey = (stageId) => `cudojo.draft.${stageId}`;

// Makes the drafts of these stages ready to read. Today that only moves the drafts from before
// languages to their CUDA keys.
export async function openDrafts(stageIds) {
  for (const stageId of stageIds) {
    const old = localStorage.getItem(oldDraftKey(stageId));
    if (old === null) continue;
    if (localStorage.getItem(draftKey(stageId, "cuda")) === null) localStorage.setItem(draftKey(stageId, "cuda"), old);
    localStorage.removeItem(oldDraftKey(stageId));
  }
}

// The draft of a stage in a language, or null when there is none (the starter stands).
export function readDraft(stageId, language) {
  return localStorage.getItem(draftKey(stageId, language));
}

// Keeps `text` as the draft; text equal to the starter drops the draft instead.
export function keepDraft(stageId, language, text, starter) {
  const key = draftKey(stageId, language);
  if (text === starter) localStorage.removeItem(key);
  else localStorage.setItem(key, text);
}

// The learner whose drafts these are (the id from the server), or nobody after sign-out.
export function setDraftsOwner(learnerId) {
  if (learnerId !== undefined) localStorage.setItem(OWNER_KEY, String(learnerId));
}

export function forgetDraftsOwner() {
  localStorage.removeItem(OWNER_KEY);
}
