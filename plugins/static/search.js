// /search: put in the author and affiliation facets the page left out for a large match set
// (plugins/search_page.py). Without script, the page's own link counts them.
document.querySelectorAll(".deferred-facets[data-url]").forEach(async (block) => {
  block.setAttribute("aria-busy", "true");
  try {
    const response = await fetch(block.dataset.url, { headers: { accept: "text/html" } });
    if (!response.ok) return;
    // the server's own escaped template output (plugins/templates/_search_facets.html)
    block.innerHTML = await response.text();
  } finally {
    block.removeAttribute("aria-busy");
  }
});
