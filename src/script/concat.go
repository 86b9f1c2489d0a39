package script

import (
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
)

// The .. operator. gopher-lua's VM converts numbers with Go's formatting (1e15 reads
// 1000000000000000, 1/3 reads 0.3333333333333333) and the VM is the dependency's. So every
// compiled chunk is rewritten before compilation: each chain a .. b .. c becomes a call of a
// hidden local, (concat)(a, b, c), which converts numbers with "%.14g" as Lua 5.1 does. The
// chunk is wrapped so the function arrives as an upvalue, without a global lookup:
//
//	local (concat) = ...          -- the outer chunk, run once per state
//	return function(...) <the script, its lines unchanged> end
//
// "(concat)" cannot be named by a script (not an identifier). Costs a Go call per chain
// instead of the VM's OP_CONCAT.

const concatName = "(concat)"

// wrapChunk returns the outer chunk for stmts, with every concatenation rewritten.
func wrapChunk(stmts []ast.Stmt) []ast.Stmt {
	rewriteStmts(stmts)
	inner := &ast.FunctionExpr{ParList: &ast.ParList{HasVargs: true}, Stmts: stmts}
	vararg := &ast.Comma3Expr{}
	local := &ast.LocalAssignStmt{Names: []string{concatName}, Exprs: []ast.Expr{vararg}}
	ret := &ast.ReturnStmt{Exprs: []ast.Expr{inner}}
	if len(stmts) > 0 {
		first, last := stmts[0].Line(), stmts[len(stmts)-1].LastLine()
		for _, n := range []ast.PositionHolder{inner, vararg, local, ret} {
			n.SetLine(first)
			n.SetLastLine(last)
		}
	}
	return []ast.Stmt{local, ret}
}

func rewriteStmts(stmts []ast.Stmt) {
	for _, s := range stmts {
		rewriteStmt(s)
	}
}

func rewriteStmt(s ast.Stmt) {
	switch s := s.(type) {
	case *ast.AssignStmt:
		rewriteExprs(s.Lhs)
		rewriteExprs(s.Rhs)
	case *ast.LocalAssignStmt:
		rewriteExprs(s.Exprs)
	case *ast.FuncCallStmt:
		s.Expr = rewrite(s.Expr)
	case *ast.DoBlockStmt:
		rewriteStmts(s.Stmts)
	case *ast.WhileStmt:
		s.Condition = rewrite(s.Condition)
		rewriteStmts(s.Stmts)
	case *ast.RepeatStmt:
		s.Condition = rewrite(s.Condition)
		rewriteStmts(s.Stmts)
	case *ast.IfStmt:
		s.Condition = rewrite(s.Condition)
		rewriteStmts(s.Then)
		rewriteStmts(s.Else)
	case *ast.NumberForStmt:
		s.Init, s.Limit = rewrite(s.Init), rewrite(s.Limit)
		if s.Step != nil {
			s.Step = rewrite(s.Step)
		}
		rewriteStmts(s.Stmts)
	case *ast.GenericForStmt:
		rewriteExprs(s.Exprs)
		rewriteStmts(s.Stmts)
	case *ast.FuncDefStmt:
		if s.Name != nil {
			s.Name.Func = rewrite(s.Name.Func)
			s.Name.Receiver = rewrite(s.Name.Receiver)
		}
		rewriteStmts(s.Func.Stmts)
	case *ast.ReturnStmt:
		rewriteExprs(s.Exprs)
	}
}

func rewriteExprs(es []ast.Expr) {
	for i, e := range es {
		es[i] = rewrite(e)
	}
}

// rewrite returns e with its concatenations replaced (e itself when it has none).
func rewrite(e ast.Expr) ast.Expr {
	switch x := e.(type) {
	case *ast.StringConcatOpExpr:
		var args []ast.Expr
		for {
			args = append(args, rewrite(x.Lhs))
			next, ok := x.Rhs.(*ast.StringConcatOpExpr)
			if !ok {
				args = append(args, rewrite(x.Rhs))
				break
			}
			x = next
		}
		fn := &ast.IdentExpr{Value: concatName}
		call := &ast.FuncCallExpr{Func: fn, Args: args, AdjustRet: true}
		for _, n := range []ast.PositionHolder{fn, call} {
			n.SetLine(e.Line())
			n.SetLastLine(e.LastLine())
		}
		return call
	case *ast.AttrGetExpr:
		x.Object, x.Key = rewrite(x.Object), rewrite(x.Key)
	case *ast.TableExpr:
		for _, f := range x.Fields {
			if f.Key != nil {
				f.Key = rewrite(f.Key)
			}
			f.Value = rewrite(f.Value)
		}
	case *ast.FuncCallExpr:
		if x.Func != nil {
			x.Func = rewrite(x.Func)
		}
		if x.Receiver != nil {
			x.Receiver = rewrite(x.Receiver)
		}
		rewriteExprs(x.Args)
	case *ast.LogicalOpExpr:
		x.Lhs, x.Rhs = rewrite(x.Lhs), rewrite(x.Rhs)
	case *ast.RelationalOpExpr:
		x.Lhs, x.Rhs = rewrite(x.Lhs), rewrite(x.Rhs)
	case *ast.ArithmeticOpExpr:
		x.Lhs, x.Rhs = rewrite(x.Lhs), rewrite(x.Rhs)
	case *ast.UnaryMinusOpExpr:
		x.Expr = rewrite(x.Expr)
	case *ast.UnaryNotOpExpr:
		x.Expr = rewrite(x.Expr)
	case *ast.UnaryLenOpExpr:
		x.Expr = rewrite(x.Expr)
	case *ast.FunctionExpr:
		rewriteStmts(x.Stmts)
	}
	return e
}

// concat is (concat): Lua 5.1's luaV_concat over its arguments, right to left, with "%.14g"
// numbers, __concat metamethods, Lua's error text, and the memory bound of string.rep.
func (st *state) concat(L *lua.LState) int {
	n := L.GetTop()
	total, plain := 0, true
	for i := 1; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			total += len(v)
		case lua.LNumber:
			total += 24
		default:
			plain = false
		}
	}
	if plain {
		if int64(total) > st.e.memCap() {
			L.RaiseError("not enough memory")
		}
		var b strings.Builder
		b.Grow(total)
		for i := 1; i <= n; i++ {
			s, _ := luaString(L.Get(i))
			b.WriteString(s)
		}
		L.Push(lua.LString(b.String()))
		return 1
	}
	acc := L.Get(n)
	for i := n - 1; i >= 1; i-- {
		acc = st.concat2(L, L.Get(i), acc)
	}
	L.Push(acc)
	return 1
}

func (st *state) concat2(L *lua.LState, a, b lua.LValue) lua.LValue {
	sa, okA := luaString(a)
	sb, okB := luaString(b)
	if okA && okB {
		if int64(len(sa)+len(sb)) > st.e.memCap() {
			L.RaiseError("not enough memory")
		}
		return lua.LString(sa + sb)
	}
	mm := L.GetMetaField(a, "__concat")
	if mm == lua.LNil {
		mm = L.GetMetaField(b, "__concat")
	}
	if mm == lua.LNil {
		bad := a
		if okA {
			bad = b
		}
		L.RaiseError("attempt to concatenate a %s value", bad.Type().String())
	}
	L.Push(mm)
	L.Push(a)
	L.Push(b)
	L.Call(2, 1)
	r := L.Get(-1)
	L.Pop(1)
	return r
}
