(function(){
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
function warn(s,x){var box=d.getElementById(s.id+'-warnings'),w=[];try{w=JSON.parse(x.responseText).warnings||[]}catch(e){}
box.textContent='';if(!w.length)return;
w.forEach(function(k){var p=d.createElement('p');p.className='warn';p.setAttribute('data-testid','upload-quality-warning');p.textContent=k.message;box.appendChild(p)});
var n=d.createElement('p');n.className='small';n.textContent=t.warnKeep;box.appendChild(n);
var b=d.createElement('button');b.type='button';b.className='retake';b.setAttribute('data-testid','upload-retake');b.textContent=t.retake;
b.addEventListener('click',function(){var i=d.getElementById(s.id);i.value='';i.click()});box.appendChild(b)}
function upload(s,f){var m=d.getElementById(s.id+'-msg'),bar=d.getElementById(s.id+'-progress'),x=new XMLHttpRequest();
x.open('POST',c.base+'/files/'+s.id);x.setRequestHeader('X-CSRF-Token',csrf);x.setRequestHeader('Content-Type',f.type);
bar.hidden=false;bar.value=0;say(m,t.uploading,'');
x.upload.onprogress=function(e){if(e.lengthComputable)bar.value=Math.round(100*e.loaded/e.total)};
x.onload=function(){if(x.status===201){ok[s.id]=true;bar.value=100;say(m,t.uploaded,'ok');warn(s,x)}else{bar.hidden=true;say(m,explain(x),'err')}ready()};
x.onerror=function(){bar.hidden=true;say(m,t.errNetwork,'err');ready()};x.send(f)}
if(form){c.sides.forEach(function(s){var i=d.getElementById(s.id);i.addEventListener('change',function(){
var f=i.files&&i.files[0],m=d.getElementById(s.id+'-msg'),p=d.getElementById(s.id+'-preview');ok[s.id]=false;ready();p.hidden=true;
d.getElementById(s.id+'-warnings').textContent='';
if(!f)return;if(c.types.indexOf(f.type)<0){say(m,t.errType,'err');i.value='';return}
if(f.size>c.maxBytes){say(m,t.errSize,'err');i.value='';return}
if(f.type.indexOf('image/')===0&&window.URL){p.src=URL.createObjectURL(f);p.hidden=false}upload(s,f)})});
form.addEventListener('submit',function(e){e.preventDefault();if(!ready()){say(fmsg,t.errMissing,'err');return}
btn.disabled=true;var x=new XMLHttpRequest(),k=d.getElementById('biometricConsent');
x.open('POST',c.base+'/submit'+(k&&k.checked?'?biometricConsent=true':''));x.setRequestHeader('X-CSRF-Token',csrf);
x.onload=function(){if(x.status===202){show('checking');poll()}else{say(fmsg,explain(x),'err');ready()}};
x.onerror=function(){say(fmsg,t.errNetwork,'err');ready()};x.send()});
ready()}if(c.polling){poll()}})();
