// The page (placeholder of the contract; web/API.md says what it reads).
const app = document.getElementById("app");
fetch("/api/captures").then((r) => r.json()).then((j) => {
  app.textContent = `microscope: ${j.captures.length} capture(s)`;
});
