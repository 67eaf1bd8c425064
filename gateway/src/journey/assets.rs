//! The journey's only CSS and JavaScript, inlined in each page (one request per page, nothing to
//! build or cache-bust). The Content-Security-Policy allows exactly these by hash (see `pages`).

/// Mobile first: one column, large touch targets, WCAG AA contrast, a visible focus ring.
pub const CSS: &str = "*{box-sizing:border-box}\
body{margin:0;font:1rem/1.5 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1a1a1a;background:#f6f7f9}\
main{max-width:34rem;margin:0 auto;padding:1.25rem 1rem 3rem}\
h1{font-size:1.4rem;margin:.5rem 0 1rem}\
.step{background:#fff;border:1px solid #c8ccd2;border-radius:.5rem;padding:1rem;margin:0 0 1rem}\
label{display:block;font-weight:600;margin-bottom:.25rem}\
.hint{color:#4a4f57;font-size:.9rem;margin:.25rem 0 .5rem}\
input[type=file]{display:block;width:100%;min-height:2.75rem;padding:.5rem;border:1px solid #6b7280;border-radius:.375rem;background:#fff}\
img.preview{display:block;max-width:100%;max-height:14rem;margin-top:.5rem;border-radius:.375rem}\
progress{width:100%;height:.75rem;margin-top:.5rem}\
.msg{min-height:1.5rem;margin:.25rem 0 0}.err{color:#a4161a}.ok{color:#1b5e20}\
button{width:100%;min-height:3rem;font:inherit;font-weight:600;color:#fff;background:#0b4f9c;border:0;border-radius:.5rem;cursor:pointer}\
button:disabled{background:#6b7280;cursor:not-allowed}\
:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}\
.small{color:#4a4f57;font-size:.875rem}[hidden]{display:none!important}";

/// Uploads each file as soon as it is chosen (checked first for type and size), shows a preview
/// and the XMLHttpRequest upload progress, submits, then polls the session status. Plain ES5 so
/// old phone browsers run it; no dependency.
/// `show` and `poll` live outside `if(form){…}`: the "being checked" page (a reload after submit)
/// has no form but polls too, and a function declared in a block would not exist there.
pub const JS: &str = r#"(function(){
var d=document,c=JSON.parse(d.getElementById('cfg').textContent),t=c.t,ok={};
c.uploaded.forEach(function(s){ok[s]=true});
var csrf=d.querySelector('meta[name="csrf-token"]').getAttribute('content');
var btn=d.getElementById('submit'),form=d.getElementById('journey'),fmsg=d.getElementById('form-msg');
function say(el,text,cls){el.textContent=text;el.className='msg'+(cls?' '+cls:'');}
function code(x){try{return JSON.parse(x.responseText).error}catch(e){return ''}}
function explain(x){var e=code(x);if(x.status===409){location.reload();return ''}
if(e==='invalid_document')return t.errType;if(e==='document_too_large')return t.errSize;
if(x.status===429)return t.errBusy;return t.errNetwork}
function ready(){var all=true;c.sides.forEach(function(s){if(s.required&&!ok[s.id])all=false});if(btn)btn.disabled=!all;return all}
function show(id){['journey','checking','done'].forEach(function(k){var e=d.getElementById(k);if(e)e.hidden=k!==id});var h=d.getElementById(id+'-title');if(h)h.focus()}
function poll(){var x=new XMLHttpRequest();x.open('GET',c.base+'/status');
x.onload=function(){var s='';try{s=JSON.parse(x.responseText).status}catch(e){}
if(s==='completed')show('done');else if(s==='expired')location.reload();else setTimeout(poll,2000)};
x.onerror=function(){setTimeout(poll,4000)};x.send()}
function upload(s,f){var m=d.getElementById(s.id+'-msg'),bar=d.getElementById(s.id+'-progress'),x=new XMLHttpRequest();
x.open('POST',c.base+'/files/'+s.id);x.setRequestHeader('X-CSRF-Token',csrf);x.setRequestHeader('Content-Type',f.type);
bar.hidden=false;bar.value=0;say(m,t.uploading,'');
x.upload.onprogress=function(e){if(e.lengthComputable)bar.value=Math.round(100*e.loaded/e.total)};
x.onload=function(){if(x.status===201){ok[s.id]=true;bar.value=100;say(m,t.uploaded,'ok')}else{bar.hidden=true;say(m,explain(x),'err')}ready()};
x.onerror=function(){bar.hidden=true;say(m,t.errNetwork,'err');ready()};x.send(f)}
if(form){c.sides.forEach(function(s){var i=d.getElementById(s.id);i.addEventListener('change',function(){
var f=i.files&&i.files[0],m=d.getElementById(s.id+'-msg'),p=d.getElementById(s.id+'-preview');ok[s.id]=false;ready();p.hidden=true;
if(!f)return;if(c.types.indexOf(f.type)<0){say(m,t.errType,'err');i.value='';return}
if(f.size>c.maxBytes){say(m,t.errSize,'err');i.value='';return}
if(f.type.indexOf('image/')===0&&window.URL){p.src=URL.createObjectURL(f);p.hidden=false}upload(s,f)})});
form.addEventListener('submit',function(e){e.preventDefault();if(!ready()){say(fmsg,t.errMissing,'err');return}
btn.disabled=true;var x=new XMLHttpRequest();x.open('POST',c.base+'/submit');x.setRequestHeader('X-CSRF-Token',csrf);
x.onload=function(){if(x.status===202){show('checking');poll()}else{say(fmsg,explain(x),'err');ready()}};
x.onerror=function(){say(fmsg,t.errNetwork,'err');ready()};x.send()});
ready()}if(c.polling){poll()}})();"#;
