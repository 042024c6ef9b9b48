var svg, frames, details, matched, searchbtn, casebtn, unzoombtn, total;
var zs = 0, zn = 0, term = null, icase = false, queued = false, TK = 0;
function init(evt) {
	svg = document.documentElement;
	frames = document.getElementById("frames");
	details = document.getElementById("details").firstChild;
	matched = document.getElementById("matched").firstChild;
	searchbtn = document.getElementById("search");
	casebtn = document.getElementById("icase");
	unzoombtn = document.getElementById("unzoom");
	total = +frames.getAttribute("data-total");
	zn = total;
	frames.addEventListener("click", function (e) {
		var g = frame_of(e.target);
		if (g) zoom(g);
	});
	frames.addEventListener("mouseover", function (e) {
		var g = frame_of(e.target);
		if (g) details.nodeValue = (g.classList.contains("m") ? "" : "Function: ") +
			g.querySelector("title").textContent;
	});
	frames.addEventListener("mouseout", function () { details.nodeValue = " "; });
	searchbtn.addEventListener("click", search_prompt);
	casebtn.addEventListener("click", toggle_case);
	unzoombtn.addEventListener("click", unzoom);
	window.addEventListener("keydown", function (e) {
		if (e.keyCode === 114 || ((e.ctrlKey || e.metaKey) && e.keyCode === 70)) {
			e.preventDefault();
			search_prompt();
		} else if (e.keyCode === 27) {
			reset_search();
		}
	});
	/* the frames are laid out in % of the window: only text needs
	 * refitting when it changes */
	window.addEventListener("resize", function () {
		if (queued) return;
		queued = true;
		window.requestAnimationFrame(function () { queued = false; refit(); });
	});
	measure();
	refit();
}
/* the average advance of the font the browser really uses: of names in
 * lower case, and of C++ ones, whichever is wider */
function measure() {
	var t = details.parentNode, w = 0, i, a;
	var s = ["std::vector<int>::push_back(Task&)", "abcdefghijklmnopqrstuvwxyz_"];
	if (!t.getComputedTextLength) return;
	for (i = 0; i < s.length; i++) {
		details.nodeValue = s[i];
		a = t.getComputedTextLength() / s[i].length;
		if (a > w) w = a;
	}
	details.nodeValue = " ";
	if (w > 0) CW = w;
}
function frame_of(n) {
	for (; n && n !== frames; n = n.parentNode)
		if (n.parentNode === frames) return n;
	return null;
}
function num(g, a) { return +g.getAttribute(a); }
function label_of(g) {
	var t = g.querySelector("title").textContent, i = t.lastIndexOf(" (");
	return i < 0 ? t : t.substring(0, i);
}
/* px per % of the window's width */
function px_per_pct() { return svg.getBoundingClientRect().width / 100; }
function refit() {
	var gs = frames.children, px = px_per_pct(), i;
	if (!px) return;
	svg.setAttribute("data-width", Math.round(px * 100));
	for (i = 0; i < gs.length; i++)
		if (!gs[i].classList.contains("hide"))
			fit(gs[i], parseFloat(gs[i].querySelector("rect").getAttribute("width")) * px);
}
/* C++ and Rust names: "::" scopes, <...> templates, (...) parameters;
 * operator names ("operator()") and "->" are text. TK: 0 text, 1 open,
 * 2 close, 3 a "::"; returns the token's length. */
function tok(s, i) {
	var j, c = s.charAt(i);
	TK = 0;
	if (s.startsWith("operator", i) && (i === 0 || !/\w/.test(s.charAt(i - 1)))) {
		j = i + 8;
		if (s.startsWith("()", j)) j += 2;
		else while (j < s.length && "<>=!+-*/%^&|~,[]".indexOf(s.charAt(j)) >= 0) j++;
		return j - i;
	}
	if (s.startsWith("->", i)) return 2;
	if (s.startsWith("::", i)) { TK = 3; return 2; }
	if ("<([{".indexOf(c) >= 0) TK = 1;
	else if (">)]}".indexOf(c) >= 0) TK = 2;
	return 1;
}
/* offsets of the top-level "::" */
function seps(s) {
	var r = [], d = 0, i = 0, l;
	while (i < s.length) {
		l = tok(s, i);
		if (TK === 1) d++;
		else if (TK === 2) { if (d) d--; }
		else if (TK === 3 && !d) r.push(i);
		i += l;
	}
	return r;
}
/* s with what is inside each top-level <...>, and each top-level (...)
 * from offset pf on (pf < 0: none), replaced by ".." */
function collapse(s, pf) {
	var r = "", d = 0, i = 0, l, c, cut = false, skipped = false;
	while (i < s.length) {
		l = tok(s, i);
		c = s.charAt(i);
		if (TK === 1) {
			if (!d && (c === "<" || (c === "(" && pf >= 0 && i >= pf))) {
				r += c;
				cut = true;
				skipped = false;
				d++;
				i += l;
				continue;
			}
			d++;
		} else if (TK === 2) {
			if (d) d--;
			if (!d && cut) {
				r += (skipped ? ".." : "") + c;
				cut = false;
				i += l;
				continue;
			}
		}
		if (cut) skipped = true;
		else r += s.substr(i, l);
		i += l;
	}
	if (cut && skipped) r += "..";
	return r;
}
/* s in at most n characters. A scoped name is cut in the middle, keeping
 * its own name: templates, then parameters, then middle scopes become
 * "..": "ns::detail::Type<..>::method(int)", "ns::..::method(..)", then
 * "method(..)", "method", "met..". Others are cut on the right. The same
 * rule as analysis_shorten() in labels.c. */
function shorten(s, n) {
	var sp, a, b, own, j, c;
	if (n < 3) return "";
	if (s.length <= n) return s;
	sp = seps(s);
	if (!sp.length) return s.substring(0, n - 2) + "..";
	a = collapse(s, -1);
	if (a.length <= n) return a;
	b = collapse(s, sp[sp.length - 1] + 2);
	if (b.length <= n) return b;
	sp = seps(b);
	own = b.substring(sp[sp.length - 1] + 2);
	for (j = sp.length - 1; j >= 1; j--) {
		c = b.substring(0, sp[j - 1]) + "::..::" + own;
		if (c.length <= n) return c;
	}
	if (own.length <= n) return own;
	own = bare(own);
	return own.length <= n ? own : own.substring(0, n - 2) + "..";
}
/* s up to its parameters: "method(..) const" is "method" */
function bare(s) {
	var d = 0, i = 0, l;
	while (i < s.length) {
		l = tok(s, i);
		if (TK === 1 && !d && i && s.charAt(i) === "(") return s.substring(0, i);
		if (TK === 1) d++;
		else if (TK === 2 && d) d--;
		i += l;
	}
	return s;
}
/* frames too narrow for text were written without a <text> */
function fit(g, w) {
	var s = shorten(label_of(g), Math.floor((w - 6) / CW)), t = g.querySelector("text"), r;
	if (!t) {
		if (!s) return;
		r = g.querySelector("rect");
		t = document.createElementNS(svg.namespaceURI, "text");
		t.setAttribute("x", r.getAttribute("x"));
		t.setAttribute("dx", "3");
		t.setAttribute("y", +r.getAttribute("y") + TY);
		g.appendChild(t);
	}
	t.textContent = s;
}
/* x and w in % of the window */
function place(g, x, w, px) {
	var r = g.querySelector("rect"), t = g.querySelector("text");
	r.setAttribute("x", x.toFixed(4) + "%");
	r.setAttribute("width", w.toFixed(4) + "%");
	if (t) t.setAttribute("x", x.toFixed(4) + "%");
	fit(g, w * px);
}
function zoom(z) {
	var d0 = num(z, "data-d"), gs = frames.children, px = px_per_pct(), scale, i;
	zs = num(z, "data-s");
	zn = num(z, "data-n");
	scale = zn ? FR / zn : 0;
	unzoombtn.classList.remove("hide");
	for (i = 0; i < gs.length; i++) {
		var g = gs[i], s = num(g, "data-s"), n = num(g, "data-n"), d = num(g, "data-d");
		g.classList.remove("parent");
		g.classList.remove("hide");
		if (d < d0 && s <= zs && s + n >= zs + zn) {
			g.classList.add("parent");
			place(g, XP, FR, px);
		} else if ((d > d0 || g === z) && s >= zs && s + n <= zs + zn) {
			place(g, XP + (s - zs) * scale, n * scale, px);
		} else {
			g.classList.add("hide");
		}
	}
}
function unzoom() {
	var gs = frames.children, px = px_per_pct(), scale = total ? FR / total : 0, i;
	zs = 0;
	zn = total;
	unzoombtn.classList.add("hide");
	for (i = 0; i < gs.length; i++) {
		gs[i].classList.remove("parent");
		gs[i].classList.remove("hide");
		place(gs[i], XP + num(gs[i], "data-s") * scale, num(gs[i], "data-n") * scale, px);
	}
}
function search_prompt() {
	if (term !== null) {
		reset_search();
		return;
	}
	var t = prompt("Enter a search term (regexp allowed, eg: ^ext4_)" +
		(icase ? ", ignoring case" : ""), "");
	if (t) search(t);
}
function toggle_case() {
	icase = !icase;
	casebtn.firstChild.nodeValue = (icase ? "[x]" : "[ ]") + " ignore case";
	casebtn.classList.toggle("show", icase);
	if (term !== null) search(term);
}
function search(t) {
	var re, gs = frames.children, iv = [], i, sum = 0, end = -1;
	try {
		re = new RegExp(t, icase ? "i" : "");
	} catch (e) {
		alert("bad regexp: " + e.message);
		return;
	}
	reset_search();
	for (i = 0; i < gs.length; i++) {
		var g = gs[i], r = g.querySelector("rect"), s = num(g, "data-s");
		/* merged small frames have no one name */
		if (g.classList.contains("m") || !re.test(label_of(g))) continue;
		r.setAttribute("data-fill", r.getAttribute("fill"));
		r.setAttribute("fill", "rgb(230,0,230)");
		iv.push([s, s + num(g, "data-n")]);
	}
	/* matches nest (a function and its callee): count the union */
	iv.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });
	for (i = 0; i < iv.length; i++) {
		if (iv[i][1] <= end) continue;
		sum += iv[i][1] - Math.max(iv[i][0], end);
		end = iv[i][1];
	}
	term = t;
	searchbtn.classList.add("show");
	searchbtn.firstChild.nodeValue = "Reset Search";
	matched.nodeValue = "Matched: " + (total ? (100 * sum / total).toFixed(1) : "0.0") + "%";
}
function reset_search() {
	var gs = frames.children, i;
	for (i = 0; i < gs.length; i++) {
		var r = gs[i].querySelector("rect");
		if (!r.hasAttribute("data-fill")) continue;
		r.setAttribute("fill", r.getAttribute("data-fill"));
		r.removeAttribute("data-fill");
	}
	term = null;
	searchbtn.classList.remove("show");
	searchbtn.firstChild.nodeValue = "Search";
	matched.nodeValue = " ";
}
