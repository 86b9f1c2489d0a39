cjson.encode = 1 return 'x'
cjson.foo = 1 return 'x'
cmsgpack.pack = nil return 'x'
bit.x = 1 return 'x'
struct.size = 5 return 'x'
cjson.null = 1 return 'x'
return R(cjson.foo, bit.nothing)
return R(type(cjson.encode), type(cmsgpack.unpack_limit), type(bit.tohex), type(struct.pack), type(cjson.new))
local f = bit.tobit return f()
local t = {x = bit.tobit} return t.x()
local t = {} function t:m() return bit.band(self) end return t:m()
return R(pcall(cjson.decode, '['))
return R(pcall(function() return cjson.decode('[') end))
return R(pcall(bit.tobit))
return R(pcall(struct.pack, 'q'))
return R(pcall(cmsgpack.unpack, '\193'))
return R(pcall(cmsgpack.unpack, '\129\192\1'))
return cmsgpack.unpack('\129\192\1')
return cmsgpack.unpack('\129\203\127\248\0\0\0\0\0\0\1')
