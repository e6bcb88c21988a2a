// The namespaces nearly every file of the library uses, once for all of them.
global using System;
global using System.Net;
global using System.Net.Sockets;
global using System.Threading;
global using System.Threading.Tasks;
global using NetServer.Buffers;
global using NetServer.Internal;
global using NetServer.Streams;
global using NetServer.Transport;
