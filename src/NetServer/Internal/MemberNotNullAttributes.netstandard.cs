// MemberNotNull arrived in .NET 5; the netstandard targets get an internal copy.
namespace System.Diagnostics.CodeAnalysis;

[AttributeUsage(AttributeTargets.Method | AttributeTargets.Property, Inherited = false, AllowMultiple = true)]
internal sealed class MemberNotNullAttribute : Attribute
{
    public MemberNotNullAttribute(params string[] members) => Members = members;

    public string[] Members { get; }
}
