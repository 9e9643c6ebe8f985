// /ops/login#token=<ops token>: log in from a link. The fragment never reaches the
// server (so no access log holds it); it is removed from the address bar and history,
// then posted with the form like a typed token.
const match = window.location.hash.match(/^#token=(.+)$/);
if (match) {
  window.history.replaceState(null, "", window.location.pathname);
  const form = document.querySelector("form.login-form");
  form.querySelector("#token").value = decodeURIComponent(match[1]);
  form.submit();
}
