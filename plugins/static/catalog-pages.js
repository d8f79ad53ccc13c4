// Datasette's own pages of the catalog (a table, a row, SQL, a canned query, the database):
// what their templates write where no block reaches, made accessible in the page itself.
// Linked by plugins/assets.py (extra_js_urls) on those pages only; a module, so it runs once
// the page is parsed.

// the page's language (axe: html-has-lang)
if (!document.documentElement.lang) {
  document.documentElement.lang = "en";
}

// the filter form's controls have no label of their own (axe: select-name, label)
const LABELS = [
  ['select[name^="_filter_column"]', "Filter column"],
  ['select[name^="_filter_op"]', "Filter operation"],
  ['input[name^="_filter_value"]', "Filter value"],
  ["select#sort_by", "Sort by"],
];
for (const [selector, label] of LABELS) {
  for (const control of document.querySelectorAll(selector)) {
    if (!control.labels.length && !control.hasAttribute("aria-label")) {
      control.setAttribute("aria-label", label);
    }
  }
}

// the page's content is its main landmark, where the header's skip link goes
const content = document.querySelector("section.content");
if (content) {
  content.id = content.id || "main";
  content.setAttribute("role", "main");
  content.tabIndex = -1;
}

// the headings right under the page's h1 are h3s in Datasette's templates: level 2 to a
// screen reader, so no level is skipped (axe: heading-order); they look as they did
for (const heading of document.querySelectorAll("section.content > h3, form.sql > h3")) {
  heading.setAttribute("aria-level", "2");
}

// the SQL editor (CodeMirror, made on the window's load) types into an input with no label
window.addEventListener("load", () => {
  setTimeout(() => {
    for (const input of document.querySelectorAll(".CodeMirror textarea")) {
      input.setAttribute("aria-label", "SQL query");
    }
  });
});
