// The widgets' HTML manager typesets labels with MathJax 2's `MathJax.Hub.Queue`; the book loads MathJax 3,
// which has no `Hub`. Give every MathJax object a `Hub.Queue` that forwards to MathJax 3's typesetPromise.
(function () {
  function patch(mj) {
    if (mj && typeof mj === "object" && !mj.Hub) {
      mj.Hub = {
        Queue: function (job) {
          var el = job && job[2];
          if (typeof mj.typesetPromise === "function") {
            mj.typesetPromise(el ? [el] : undefined).catch(function () {});
          }
        },
      };
    }
    return mj;
  }
  var current = patch(window.MathJax);
  Object.defineProperty(window, "MathJax", {
    configurable: true,
    get: function () { return current; },
    set: function (value) { current = patch(value); },
  });
})();
